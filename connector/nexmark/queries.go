package nexmark

import (
	"fmt"
	"strings"
)

// Query is one Nexmark query as a materialized view, in RisingWave's
// dialect (TUMBLE, HOP), over the sources bid, auction and person that
// SourceDDL creates.
type Query struct {
	// Name is q0, q1, ...; the view is nexmark_<Name>.
	Name string
	// SQL is the CREATE MATERIALIZED VIEW statement.
	SQL string
}

// View returns the name of the query's materialized view.
func (q Query) View() string { return "nexmark_" + q.Name }

// tieFree are the columns of the queries whose ROW_NUMBER() picks among
// tied rows: any of them is a right answer.
var tieFree = map[string]string{
	"q9":  "id, item_name, reserve, price, bid_date_time",
	"q18": "auction, bidder, date_time",
	"q19": "auction, price, rank_number",
}

// Columns returns the select list that compares the query's results: "*",
// or the columns that do not depend on which of several tied rows a
// ROW_NUMBER() picked.
func (q Query) Columns() string {
	if c, ok := tieFree[q.Name]; ok {
		return c
	}
	return "*"
}

// Select returns the query's SELECT, without CREATE MATERIALIZED VIEW.
func (q Query) Select() string {
	_, sel, _ := strings.Cut(q.SQL, " AS\n")
	return sel
}

// SourceOptions configure the sources of SourceDDL.
type SourceOptions struct {
	// EventNum is nexmark.event.num (0: unbounded).
	EventNum int64
	// Splits is nexmark.split.num (0: 1).
	Splits int
	// Watermark declares WATERMARK FOR date_time AS date_time - INTERVAL '4' SECOND.
	Watermark bool
	// Extra is more options, "name = 'value', ..." (e.g. nexmark.min.event.gap.in.ns).
	Extra string
	// Combined creates one source, nexmark, in the combined form, and views
	// person, auction and bid over it, instead of three sources.
	Combined bool
}

// SourceDDL returns the statements that create person, auction and bid:
// three sources, or one combined source and three views over it.
func SourceDDL(o SourceOptions) []string {
	if o.Combined {
		ddl := []string{sourceDDL("nexmark", Combined, o)}
		for _, t := range []Table{Person, Auction, Bid} {
			var b strings.Builder
			fmt.Fprintf(&b, "CREATE VIEW %s AS SELECT ", t)
			for i, c := range Columns(t) {
				if i > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "(%s).%s AS %s", t, c.Name, c.Name)
			}
			fmt.Fprintf(&b, " FROM nexmark WHERE event_type = %d", int(t)-1)
			ddl = append(ddl, b.String())
		}
		return ddl
	}
	var ddl []string
	for _, t := range []Table{Person, Auction, Bid} {
		ddl = append(ddl, sourceDDL(t.String(), t, o))
	}
	return ddl
}

func sourceDDL(name string, t Table, o SourceOptions) string {
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE SOURCE %s (", name)
	for i, c := range Columns(t) {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c.Name + " " + c.Type.String())
	}
	if o.Watermark {
		b.WriteString(", WATERMARK FOR date_time AS date_time - INTERVAL '4' SECOND")
	}
	b.WriteString(") WITH (connector = 'nexmark'")
	if t != Combined {
		fmt.Fprintf(&b, ", nexmark.table.type = '%s'", t)
	}
	if o.EventNum > 0 {
		fmt.Fprintf(&b, ", nexmark.event.num = '%d'", o.EventNum)
	}
	if o.Splits > 1 {
		fmt.Fprintf(&b, ", nexmark.split.num = '%d'", o.Splits)
	}
	if o.Extra != "" {
		b.WriteString(", " + o.Extra)
	}
	b.WriteString(")")
	return b.String()
}

// QueryNamed returns the query called name, or false.
func QueryNamed(name string) (Query, bool) {
	for _, q := range Queries {
		if q.Name == name {
			return q, true
		}
	}
	return Query{}, false
}

// rankCounts is the FILTER counts by price rank of q15, q16 and q17.
const rankCounts = `    count(*) AS total_bids,
    count(*) FILTER (WHERE price < 10000) AS rank1_bids,
    count(*) FILTER (WHERE price >= 10000 AND price < 1000000) AS rank2_bids,
    count(*) FILTER (WHERE price >= 1000000) AS rank3_bids`

// distinctCounts is the distinct bidder and auction counts of q15 and q16.
const distinctCounts = `    count(DISTINCT bidder) AS total_bidders,
    count(DISTINCT bidder) FILTER (WHERE price < 10000) AS rank1_bidders,
    count(DISTINCT bidder) FILTER (WHERE price >= 10000 AND price < 1000000) AS rank2_bidders,
    count(DISTINCT bidder) FILTER (WHERE price >= 1000000) AS rank3_bidders,
    count(DISTINCT auction) AS total_auctions,
    count(DISTINCT auction) FILTER (WHERE price < 10000) AS rank1_auctions,
    count(DISTINCT auction) FILTER (WHERE price >= 10000 AND price < 1000000) AS rank2_auctions,
    count(DISTINCT auction) FILTER (WHERE price >= 1000000) AS rank3_auctions`

// Queries are the Nexmark queries (q6, q10, q11, q12 and q13 need features
// or sinks outside streamsql's scope: session windows over processing
// time, file sinks, side inputs).
var Queries = []Query{
	{"q0", `CREATE MATERIALIZED VIEW nexmark_q0 AS
SELECT auction, bidder, price, date_time FROM bid`},

	// Currency conversion.
	{"q1", `CREATE MATERIALIZED VIEW nexmark_q1 AS
SELECT auction, bidder, 0.908 * price AS price, date_time FROM bid`},

	// Bids on a few auctions.
	{"q2", `CREATE MATERIALIZED VIEW nexmark_q2 AS
SELECT auction, price FROM bid
WHERE auction = 1007 OR auction = 1020 OR auction = 2001 OR auction = 2019 OR auction = 2087`},

	// Local item suggestion: sellers in a few states, one category.
	{"q3", `CREATE MATERIALIZED VIEW nexmark_q3 AS
SELECT p.name, p.city, p.state, a.id
FROM auction AS a INNER JOIN person AS p ON a.seller = p.id
WHERE a.category = 10 AND (p.state = 'or' OR p.state = 'id' OR p.state = 'ca')`},

	// Average closing price per category.
	{"q4", `CREATE MATERIALIZED VIEW nexmark_q4 AS
SELECT q.category, avg(q.final) AS avg
FROM (
    SELECT max(b.price) AS final, a.category
    FROM auction a, bid b
    WHERE a.id = b.auction AND b.date_time BETWEEN a.date_time AND a.expires
    GROUP BY a.id, a.category
) q
GROUP BY q.category`},

	// Hot items: the auctions with the most bids in each sliding window.
	{"q5", `CREATE MATERIALIZED VIEW nexmark_q5 AS
SELECT auction_bids.auction, auction_bids.num
FROM (
    SELECT auction, count(*) AS num, window_start AS starttime
    FROM HOP(bid, date_time, INTERVAL '2' SECOND, INTERVAL '10' SECOND)
    GROUP BY window_start, auction
) AS auction_bids
JOIN (
    SELECT max(count_bids.num) AS maxn, count_bids.starttime_c
    FROM (
        SELECT count(*) AS num, window_start AS starttime_c
        FROM HOP(bid, date_time, INTERVAL '2' SECOND, INTERVAL '10' SECOND)
        GROUP BY auction, window_start
    ) AS count_bids
    GROUP BY count_bids.starttime_c
) AS max_bids
ON auction_bids.starttime = max_bids.starttime_c AND auction_bids.num >= max_bids.maxn`},

	// Highest bid of each 10-second window.
	{"q7", `CREATE MATERIALIZED VIEW nexmark_q7 AS
SELECT b.auction, b.price, b.bidder, b.date_time
FROM bid b
JOIN (
    SELECT max(price) AS maxprice, window_end AS date_time
    FROM TUMBLE(bid, date_time, INTERVAL '10' SECOND)
    GROUP BY window_end
) b1 ON b.price = b1.maxprice
WHERE b.date_time BETWEEN b1.date_time - INTERVAL '10' SECOND AND b1.date_time`},

	// New users who opened an auction in the window they registered in.
	{"q8", `CREATE MATERIALIZED VIEW nexmark_q8 AS
SELECT p.id, p.name, p.starttime
FROM (
    SELECT id, name, window_start AS starttime, window_end AS endtime
    FROM TUMBLE(person, date_time, INTERVAL '10' SECOND)
    GROUP BY id, name, window_start, window_end
) p
JOIN (
    SELECT seller, window_start AS starttime, window_end AS endtime
    FROM TUMBLE(auction, date_time, INTERVAL '10' SECOND)
    GROUP BY seller, window_start, window_end
) a ON p.id = a.seller AND p.starttime = a.starttime AND p.endtime = a.endtime`},

	// The winning bid of each auction.
	{"q9", `CREATE MATERIALIZED VIEW nexmark_q9 AS
SELECT id, item_name, description, initial_bid, reserve, date_time, expires, seller, category,
    auction, bidder, price, bid_date_time
FROM (
    SELECT a.*, b.auction, b.bidder, b.price, b.date_time AS bid_date_time,
        row_number() OVER (PARTITION BY a.id ORDER BY b.price DESC, b.date_time ASC) AS rownum
    FROM auction a, bid b
    WHERE a.id = b.auction AND b.date_time BETWEEN a.date_time AND a.expires
) t
WHERE rownum <= 1`},

	// Bids classified by the time of day, with the number of c's in extra
	// (RisingWave counts them with a user-defined function, count_char).
	{"q14", `CREATE MATERIALIZED VIEW nexmark_q14 AS
SELECT auction, bidder, 0.908 * price AS price,
    CASE
        WHEN extract(hour FROM date_time) >= 8 AND extract(hour FROM date_time) <= 18 THEN 'dayTime'
        WHEN extract(hour FROM date_time) <= 6 OR extract(hour FROM date_time) >= 20 THEN 'nightTime'
        ELSE 'otherTime'
    END AS bidTimeType,
    date_time,
    length(extra) - length(replace(extra, 'c', '')) AS c_counts
FROM bid
WHERE 0.908 * price > 1000000 AND 0.908 * price < 50000000`},

	// Daily bid statistics.
	{"q15", `CREATE MATERIALIZED VIEW nexmark_q15 AS
SELECT to_char(date_time, 'yyyy-MM-dd') AS day,
` + rankCounts + `,
` + distinctCounts + `
FROM bid
GROUP BY to_char(date_time, 'yyyy-MM-dd')`},

	// Daily statistics per channel.
	{"q16", `CREATE MATERIALIZED VIEW nexmark_q16 AS
SELECT channel, to_char(date_time, 'YYYY-MM-DD') AS day, max(to_char(date_time, 'HH:mm')) AS minute,
` + rankCounts + `,
` + distinctCounts + `
FROM bid
GROUP BY channel, to_char(date_time, 'YYYY-MM-DD')`},

	// Daily statistics per auction.
	{"q17", `CREATE MATERIALIZED VIEW nexmark_q17 AS
SELECT auction, to_char(date_time, 'YYYY-MM-DD') AS day,
` + rankCounts + `,
    min(price) AS min_price, max(price) AS max_price, avg(price) AS avg_price, sum(price) AS sum_price
FROM bid
GROUP BY auction, to_char(date_time, 'YYYY-MM-DD')`},

	// The last bid of each bidder on each auction.
	{"q18", `CREATE MATERIALIZED VIEW nexmark_q18 AS
SELECT auction, bidder, price, channel, url, date_time, extra
FROM (
    SELECT *, row_number() OVER (PARTITION BY bidder, auction ORDER BY date_time DESC) AS rank_number
    FROM bid
) t
WHERE rank_number <= 1`},

	// The ten highest bids of each auction.
	{"q19", `CREATE MATERIALIZED VIEW nexmark_q19 AS
SELECT * FROM (
    SELECT *, row_number() OVER (PARTITION BY auction ORDER BY price DESC) AS rank_number
    FROM bid
) t
WHERE rank_number <= 10`},

	// Bids with their auction, for one category.
	{"q20", `CREATE MATERIALIZED VIEW nexmark_q20 AS
SELECT auction, bidder, price, channel, url, b.date_time AS bid_date_time, b.extra AS bid_extra,
    item_name, description, initial_bid, reserve, a.date_time AS auction_date_time, expires, seller, category,
    a.extra AS auction_extra
FROM bid AS b INNER JOIN auction AS a ON b.auction = a.id
WHERE a.category = 10`},

	// The channel id of each bid, from its channel or its URL.
	{"q21", `CREATE MATERIALIZED VIEW nexmark_q21 AS
SELECT auction, bidder, price, channel,
    CASE
        WHEN lower(channel) = 'apple' THEN '0'
        WHEN lower(channel) = 'google' THEN '1'
        WHEN lower(channel) = 'facebook' THEN '2'
        WHEN lower(channel) = 'baidu' THEN '3'
        ELSE (regexp_match(url, '(&|^)channel_id=([^&]*)'))[2]
    END AS channel_id
FROM bid
WHERE (regexp_match(url, '(&|^)channel_id=([^&]*)'))[2] IS NOT NULL
   OR lower(channel) IN ('apple', 'google', 'facebook', 'baidu')`},

	// The directories of each bid's URL.
	{"q22", `CREATE MATERIALIZED VIEW nexmark_q22 AS
SELECT auction, bidder, price, channel,
    split_part(url, '/', 4) AS dir1, split_part(url, '/', 5) AS dir2, split_part(url, '/', 6) AS dir3
FROM bid`},

	// The highest bid of each auction; auctions without bids have NULL.
	{"q101", `CREATE MATERIALIZED VIEW nexmark_q101 AS
SELECT a.id AS auction_id, a.item_name AS auction_item_name, b.max_price AS current_highest_bid
FROM auction a
LEFT OUTER JOIN (
    SELECT b1.auction, max(b1.price) AS max_price FROM bid b1 GROUP BY b1.auction
) b ON a.id = b.auction`},

	// Auctions with at least the average number of bids per auction.
	{"q102", `CREATE MATERIALIZED VIEW nexmark_q102 AS
SELECT a.id AS auction_id, a.item_name AS auction_item_name, count(b.auction) AS bid_count
FROM auction a
JOIN bid b ON a.id = b.auction
GROUP BY a.id, a.item_name
HAVING count(b.auction) >= (SELECT count(*) / count(DISTINCT auction) FROM bid)`},

	// Auctions with at least 20 bids (semi join).
	{"q103", `CREATE MATERIALIZED VIEW nexmark_q103 AS
SELECT a.id AS auction_id, a.item_name AS auction_item_name
FROM auction a
WHERE a.id IN (SELECT b.auction FROM bid b GROUP BY b.auction HAVING count(*) >= 20)`},

	// Auctions without fewer than 20 bids (anti join).
	{"q104", `CREATE MATERIALIZED VIEW nexmark_q104 AS
SELECT a.id AS auction_id, a.item_name AS auction_item_name
FROM auction a
WHERE a.id NOT IN (SELECT b.auction FROM bid b GROUP BY b.auction HAVING count(*) < 20)`},

	// The 1000 auctions with the most bids, and those tied with the last.
	{"q105", `CREATE MATERIALIZED VIEW nexmark_q105 AS
SELECT a.id AS auction_id, a.item_name AS auction_item_name, count(b.auction) AS bid_count
FROM auction a
JOIN bid b ON a.id = b.auction
GROUP BY a.id, a.item_name
ORDER BY bid_count DESC
LIMIT 1000 WITH TIES`},
}
