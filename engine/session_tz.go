package engine

import (
	"strings"

	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// checkTimeZone validates a TimeZone setting and returns the zone's name as
// SHOW prints it (europe/berlin is Europe/Berlin, -7 is <-07>+07).
func checkTimeZone(v string) (string, error) {
	z, err := loadTimeZone(v)
	if err != nil {
		return "", err
	}
	return z.Name(), nil
}

func loadTimeZone(v string) (*types.Zone, error) {
	z, err := types.LoadZone(v)
	if err != nil {
		return nil, sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for parameter \"TimeZone\": \"%s\"", v)
	}
	return z, nil
}

// startupTimeZone is the zone a client's startup message asks for (psql,
// pgx and JDBC send TimeZone), nil if none.
func startupTimeZone(startup map[string]string) (*types.Zone, error) {
	for k, v := range startup {
		if strings.EqualFold(k, "timezone") {
			return loadTimeZone(v)
		}
	}
	return nil, nil
}

// TimeZone implements pgwire.ZonedSession.
func (s *session) TimeZone() *types.Zone { return s.zone }

// setZone follows a change of the timezone parameter.
func (s *session) setZone() {
	s.zone = types.UTC
	if v, ok := s.params["timezone"]; ok {
		if z, err := types.LoadZone(v); err == nil {
			s.zone = z
		}
	}
}
