package crashtest

// joinViews are the fixed views over joins, created after the aggregate
// views (j_view_table reads events_by_client). Every one is per client: the
// join keys include client, or (j_in) a value that determines it.
var joinViews = []*viewDef{
	{
		// An inner join on the shared key (client, grp), filtered on both
		// sides so that its output stays small.
		name: "j_inner",
		query: "SELECT a.client, a.id, e.seq, a.amount, e.val FROM acct a JOIN events e " +
			"ON a.client = e.client AND a.grp = e.grp WHERE e.tag <> 'bulk' AND a.amount >= 800",
		perClient: true,
		model: func(t *tables) [][]string {
			var rows [][]string
			eachPair(t, func(a acctRow, e eventRow) {
				if e.tag != "bulk" && a.amount >= 800 {
					rows = append(rows, []string{itoa(a.client), itoa(a.id), itoa(e.seq), itoa(a.amount), itoa(e.val)})
				}
			})
			return rows
		},
	},
	{
		// The whole fan-out of the same join (every acct row with every
		// event of its group but the bulk ones), aggregated.
		name: "j_pairs",
		query: "SELECT a.client, a.grp, count(*) AS pairs, sum(a.amount + e.val) AS total FROM acct a JOIN events e " +
			"ON a.client = e.client AND a.grp = e.grp WHERE e.tag <> 'bulk' GROUP BY a.client, a.grp",
		perClient: true,
		model: func(t *tables) [][]string {
			// pairs = |A|·|E| and total = ΣA·|E| + ΣE·|A| per group.
			as, es := map[[2]int64]*agg{}, map[[2]int64]*agg{}
			for _, r := range t.acct {
				aggFor(as, [2]int64{r.client, r.grp}).add(r.amount, "")
			}
			for _, r := range t.events {
				if r.tag != "bulk" {
					aggFor(es, [2]int64{r.client, r.grp}).add(r.val, "")
				}
			}
			var rows [][]string
			for k, a := range as {
				if e := es[k]; e != nil {
					rows = append(rows, []string{itoa(k[0]), itoa(k[1]), itoa(a.n * e.n), itoa(a.sum*e.n + e.sum*a.n)})
				}
			}
			return rows
		},
	},
	{
		// A left outer join whose ON condition filters the right side, so
		// that acct rows gain and lose their matches (and NULL padding) as
		// events come, go and change value.
		name: "j_left",
		query: "SELECT a.client, a.id, a.grp, e.seq, e.val FROM acct a LEFT JOIN events e " +
			"ON a.client = e.client AND a.grp = e.grp AND e.val >= 900",
		perClient: true,
		model: func(t *tables) [][]string {
			var rows [][]string
			matches := map[int64]int{}
			eachPair(t, func(a acctRow, e eventRow) {
				if e.val >= 900 {
					matches[a.id]++
					rows = append(rows, []string{itoa(a.client), itoa(a.id), itoa(a.grp), itoa(e.seq), itoa(e.val)})
				}
			})
			for _, a := range t.acct {
				if matches[a.id] == 0 {
					rows = append(rows, []string{itoa(a.client), itoa(a.id), itoa(a.grp), "NULL", "NULL"})
				}
			}
			return rows
		},
	},
	{
		// IN (subquery): a semi join on an expression; client*10 + grp names
		// one client's group (grp < 4), so the view is per client.
		name: "j_in",
		query: "SELECT client, id, grp, amount FROM acct " +
			"WHERE client * 10 + grp IN (SELECT client * 10 + grp FROM events WHERE tag = 'amber')",
		perClient: true,
		model: func(t *tables) [][]string {
			amber := map[[2]int64]bool{}
			for _, e := range t.events {
				if e.tag == "amber" {
					amber[[2]int64{e.client, e.grp}] = true
				}
			}
			var rows [][]string
			for _, a := range t.acct {
				if amber[[2]int64{a.client, a.grp}] {
					rows = append(rows, []string{itoa(a.client), itoa(a.id), itoa(a.grp), itoa(a.amount)})
				}
			}
			return rows
		},
	},
	{
		// A view joined with a table: every event changes the aggregate row
		// that each of the group's acct rows is joined with.
		name: "j_view_table",
		query: "SELECT a.client, a.id, a.grp, b.n, b.total, b.tags FROM acct a JOIN events_by_client b " +
			"ON a.client = b.client AND a.grp = b.grp",
		perClient: true,
		model: func(t *tables) [][]string {
			g := map[[2]int64]*agg{}
			for _, r := range t.events {
				aggFor(g, [2]int64{r.client, r.grp}).add(r.val, r.tag)
			}
			var rows [][]string
			for _, a := range t.acct {
				if b := g[[2]int64{a.client, a.grp}]; b != nil {
					rows = append(rows, []string{itoa(a.client), itoa(a.id), itoa(a.grp),
						itoa(b.n), itoa(b.sum), itoa(int64(len(b.distinct)))})
				}
			}
			return rows
		},
	},
}

// extraJoinViews are join views created and dropped during the workload,
// so that kills also hit the backfill of a join.
var extraJoinViews = []*viewDef{
	{
		// NOT IN: a null-aware anti join, whose output depends on whether
		// the right side is empty.
		name:  "x_not_in",
		query: "SELECT client, id, amount FROM acct WHERE amount NOT IN (SELECT val FROM events WHERE tag = 'violet')",
		model: func(t *tables) [][]string {
			violet := map[int64]bool{}
			for _, e := range t.events {
				if e.tag == "violet" {
					violet[e.val] = true
				}
			}
			var rows [][]string
			for _, a := range t.acct {
				if !violet[a.amount] {
					rows = append(rows, []string{itoa(a.client), itoa(a.id), itoa(a.amount)})
				}
			}
			return rows
		},
	},
	{
		// A full outer join on a key that matches now and then: ids and seqs
		// come from one counter per client, so an acct row matches the event
		// created just before it.
		name:  "x_full",
		query: "SELECT a.id, a.amount, e.seq, e.val FROM acct a FULL JOIN events e ON a.id = e.seq + 1",
		model: func(t *tables) [][]string {
			var rows [][]string
			matched := map[int64]bool{}
			for _, a := range t.acct {
				if e, ok := t.events[a.id-1]; ok {
					matched[e.seq] = true
					rows = append(rows, []string{itoa(a.id), itoa(a.amount), itoa(e.seq), itoa(e.val)})
				} else {
					rows = append(rows, []string{itoa(a.id), itoa(a.amount), "NULL", "NULL"})
				}
			}
			for _, e := range t.events {
				if !matched[e.seq] {
					rows = append(rows, []string{"NULL", "NULL", itoa(e.seq), itoa(e.val)})
				}
			}
			return rows
		},
	},
}

// eachPair calls f with every pair of an acct row and an events row of the
// same client and grp.
func eachPair(t *tables, f func(acctRow, eventRow)) {
	byGroup := map[[2]int64][]eventRow{}
	for _, e := range t.events {
		k := [2]int64{e.client, e.grp}
		byGroup[k] = append(byGroup[k], e)
	}
	for _, a := range t.acct {
		for _, e := range byGroup[[2]int64{a.client, a.grp}] {
			f(a, e)
		}
	}
}
