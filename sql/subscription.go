package sql

import (
	"strconv"
	"strings"
	"time"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
)

// Subscriptions are RisingWave's: a retained change log of a relation.
//
//	CREATE SUBSCRIPTION [IF NOT EXISTS] s FROM v [WITH (retention = '1h')]
//	DECLARE c SUBSCRIPTION CURSOR FOR s [SINCE epoch]
//	DROP SUBSCRIPTION [IF EXISTS] s
//
// A subscription is a sink (CreateSink) of SELECT * FROM v whose connector,
// "subscription", writes the change stream into a state table.

// DefaultRetention is a subscription's retention without the option.
const DefaultRetention = time.Hour

// SubscriptionConnector is the sink connector of subscriptions.
const SubscriptionConnector = "subscription"

// IsSubscription reports whether rel is a subscription.
func IsSubscription(rel *catalog.Relation) bool {
	return rel != nil && rel.Kind == catalog.Sink && rel.Options["connector"] == SubscriptionConnector
}

// DropSubscription is DROP SUBSCRIPTION [IF EXISTS] name.
type DropSubscription struct {
	Name     ir.ObjectName
	IfExists bool
	Path     []string
}

func (*DropSubscription) Tag() string { return "DROP SUBSCRIPTION" }

// DeclareSubscriptionCursor is DECLARE c SUBSCRIPTION CURSOR FOR s [SINCE
// epoch]: the cursor reads the subscription's changes after epoch (without
// SINCE: after the last committed epoch).
type DeclareSubscriptionCursor struct {
	Name         string
	Subscription *catalog.Relation
	Since        uint64
	HasSince     bool
}

func (*DeclareSubscriptionCursor) Tag() string { return "DECLARE SUBSCRIPTION CURSOR" }

// declareSubscriptionSyntax is a parsed DECLARE ... SUBSCRIPTION CURSOR.
type declareSubscriptionSyntax struct {
	cursor   string
	sub      ir.ObjectName
	since    uint64
	hasSince bool
}

func (*declareSubscriptionSyntax) Tag() string { return "DECLARE SUBSCRIPTION CURSOR" }

// parseCreateSubscription parses CREATE SUBSCRIPTION as a CREATE SINK of the
// subscription connector.
func parseCreateSubscription(src string) (ir.Statement, error) {
	text := src
	if res, err := pg_query.Scan(src); err == nil && lastWithOptions(res.Tokens, 2) < 0 {
		text += " WITH (retention = '1h')" // after the statement: positions stay
	}
	st, err := parseCreateSink(text)
	if err != nil {
		return nil, err
	}
	s := st.(*createSinkSyntax)
	if s.query.GetSelectStmt().GetFromClause() == nil || s.query.GetSelectStmt().GetTargetList() == nil ||
		s.options["format"] != "" {
		return nil, sqlerr.New(sqlerr.SyntaxError, "CREATE SUBSCRIPTION needs FROM relation [WITH (retention = '...')]")
	}
	for k, v := range s.options {
		if k != "retention" {
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "unrecognized CREATE SUBSCRIPTION option \"%s\"", k).
				WithHint("The option is retention.")
		}
		if _, err := ParseRetention(v); err != nil {
			return nil, err
		}
	}
	s.options["connector"] = SubscriptionConnector
	return s, nil
}

// ParseRetention reads a retention: a number of seconds, or a duration
// such as '1h', '30m', '7d', '1 hour' or '2 days'.
func ParseRetention(v string) (time.Duration, error) {
	s := strings.ToLower(strings.TrimSpace(v))
	bad := sqlerr.New(sqlerr.InvalidParameterValue, "invalid retention \"%s\"", v).
		WithHint("Write a duration such as '1h', '30m' or '7d'.")
	if n, err := strconv.ParseFloat(s, 64); err == nil {
		if n <= 0 {
			return 0, bad
		}
		return time.Duration(n * float64(time.Second)), nil
	}
	fields := strings.Fields(s)
	if len(fields) == 2 {
		unit := strings.TrimSuffix(fields[1], "s")
		units := map[string]string{"second": "s", "sec": "s", "minute": "m", "min": "m", "hour": "h", "day": "d"}
		if u, ok := units[unit]; ok {
			s = fields[0] + u
		}
	}
	if strings.HasSuffix(s, "d") {
		n, err := strconv.ParseFloat(strings.TrimSuffix(s, "d"), 64)
		if err != nil || n <= 0 {
			return 0, bad
		}
		return time.Duration(n * 24 * float64(time.Hour)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, bad
	}
	return d, nil
}

// parseDeclareSubscription parses DECLARE c SUBSCRIPTION CURSOR FOR s
// [SINCE epoch] from the statement's tokens.
func parseDeclareSubscription(words []string) (ir.Statement, error) {
	// declare c subscription cursor for s ...
	if len(words) < 6 || words[2] != "subscription" || words[3] != "cursor" || words[4] != "for" {
		return nil, sqlerr.New(sqlerr.SyntaxError, "syntax error: write DECLARE c SUBSCRIPTION CURSOR FOR s [SINCE epoch]")
	}
	name, _ := customName(words[1:2])
	sub, rest := customName(words[5:])
	s := &declareSubscriptionSyntax{cursor: name.Name, sub: sub}
	switch {
	case len(rest) == 0:
	case len(rest) == 2 && rest[0] == "since":
		n, err := strconv.ParseUint(rest[1], 10, 64)
		if err != nil {
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "SINCE needs an epoch (a number), not %s", rest[1])
		}
		s.since, s.hasSince = n, true
	default:
		return nil, sqlerr.New(sqlerr.SyntaxError, "syntax error at or near \"%s\"", rest[0])
	}
	return s, nil
}

// isSubscriptionStatement reports whether words are CREATE or DROP
// SUBSCRIPTION or DECLARE ... SUBSCRIPTION CURSOR.
func isSubscriptionStatement(words []string) bool {
	return len(words) >= 3 && (words[0] == "create" || words[0] == "drop") && words[1] == "subscription" ||
		len(words) >= 4 && words[0] == "declare" && words[2] == "subscription" && words[3] == "cursor"
}

// parseSubscriptionStatement parses a statement isSubscriptionStatement
// accepted.
func parseSubscriptionStatement(src string, words []string) (ir.Statement, error) {
	switch words[0] {
	case "create":
		return parseCreateSubscription(src)
	case "drop":
		name, ifExists, _, err := parseDropNamed(words, "SUBSCRIPTION")
		if err != nil {
			return nil, err
		}
		return &DropSubscription{Name: name, IfExists: ifExists}, nil
	}
	return parseDeclareSubscription(words)
}

// bindDeclareSubscription resolves the subscription of a DECLARE.
func (b *binder) bindDeclareSubscription(s *declareSubscriptionSyntax) (ir.Statement, error) {
	rel, err := b.lookupSubscription(s.sub)
	if err != nil {
		return nil, err
	}
	return &DeclareSubscriptionCursor{Name: s.cursor, Subscription: rel, Since: s.since, HasSince: s.hasSince}, nil
}

// lookupSubscription returns the subscription name, or 42704.
func (b *binder) lookupSubscription(name ir.ObjectName) (*catalog.Relation, error) {
	rel, err := b.lookup(&pg_query.RangeVar{Schemaname: name.Schema, Relname: name.Name, Location: -1})
	if !IsSubscription(rel) {
		if err == nil || sqlerr.Wrap(err).Code == sqlerr.UndefinedTable {
			return nil, sqlerr.New(sqlerr.UndefinedObject, "subscription \"%s\" does not exist", name.Name)
		}
		return nil, err
	}
	return rel, nil
}
