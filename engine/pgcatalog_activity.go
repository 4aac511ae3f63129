package engine

import (
	"time"

	"github.com/streamsql/streamsql/types"
)

// activityRows are pg_stat_activity's: one row per connected session. As
// in PostgreSQL, a role that is neither a superuser nor the session's user
// sees only who is connected where, not what the session runs.
func (v *pgView) activityRows() [][]types.Datum {
	roleOIDs := map[string]int64{}
	viewerSuper := true
	for _, r := range v.roles() {
		roleOIDs[r.name] = r.oid
		if r.name == v.user {
			viewerSuper = r.super
		}
	}
	micros := func(t time.Time) types.Datum {
		if t.IsZero() {
			return null
		}
		return types.DInt(t.UnixMicro())
	}
	var rows [][]types.Datum
	for _, a := range v.e.queries.activity() {
		datid := null
		if d := v.e.cat.Database(a.database); d != nil {
			datid = oid(d.OID())
		}
		usesys := null
		if o, ok := roleOIDs[a.user]; ok {
			usesys = oid(o)
		}
		state, query, queryStart, stateAt, start := null, txt("<insufficient privilege>"), null, null, null
		if viewerSuper || a.user == v.user {
			state, query = txt(a.state), txt(a.query)
			start, stateAt, queryStart = micros(a.backendStart), micros(a.stateAt), micros(a.queryStart)
		}
		rows = append(rows, []types.Datum{
			datid, txt(a.database), i64(int(a.pid)), usesys, txt(a.user),
			txt(a.app), null, start, null,
			queryStart, stateAt, null, null, state,
			null, null, query, txt("client backend"),
		})
	}
	return rows
}
