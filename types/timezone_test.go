package types

import (
	"testing"
)

func mustParseTS(t *testing.T, s string) int64 {
	t.Helper()
	v, err := parseTimestamp(TimestampT, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestLoadZoneNames(t *testing.T) {
	for _, c := range []struct{ in, name string }{
		{"Europe/Berlin", "Europe/Berlin"},
		{"europe/berlin", "Europe/Berlin"},
		{"AMERICA/NEW_YORK", "America/New_York"},
		{"utc", "UTC"},
		{"GMT", "GMT"},
		{"EST5EDT", "EST5EDT"},
		{"-7", "<-07>+07"},
		{"5.5", "<+05:30>-05:30"},
		{"+03", "<+03>-03"},
		{"0", "<+00>-00"},
		{"16", "<+16>-16"},
		{"+03:30", "+03:30"},
		{"UTC+3", "UTC+3"},
		{"<+05>-05", "<+05>-05"},
	} {
		z, err := LoadZone(c.in)
		if err != nil {
			t.Errorf("LoadZone(%q): %v", c.in, err)
			continue
		}
		if z.Name() != c.name {
			t.Errorf("LoadZone(%q).Name() = %q, want %q", c.in, z.Name(), c.name)
		}
		again, err := LoadZone(z.Name())
		if err != nil || again.OffsetAt(0) != z.OffsetAt(0) {
			t.Errorf("LoadZone(%q) does not load its own name back: %v", c.in, err)
		}
	}
	for _, bad := range []string{"Foo/Bar", "Z", "", "Local", "../etc/passwd", "168", "UTC+168", "ab+1", "PST"} {
		if _, err := LoadZone(bad); err == nil {
			t.Errorf("LoadZone(%q) succeeded", bad)
		}
	}
}

func TestZoneOffsets(t *testing.T) {
	for _, c := range []struct {
		zone  string
		at    bool
		utc   string // an instant, as UTC wall-clock time
		off   int
		local string
	}{
		{"Europe/Berlin", false, "2024-01-15 12:00:00", 3600, "2024-01-15 13:00:00+01"},
		{"Europe/Berlin", false, "2024-07-15 12:00:00", 7200, "2024-07-15 14:00:00+02"},
		{"Europe/Berlin", false, "1800-01-01 00:00:00", 3208, "1800-01-01 00:53:28+00:53:28"},
		{"Asia/Kolkata", false, "2024-01-01 00:00:00", 19800, "2024-01-01 05:30:00+05:30"},
		{"America/St_Johns", false, "2024-01-01 00:00:00", -12600, "2023-12-31 20:30:00-03:30"},
		{"Australia/Lord_Howe", false, "2024-07-01 00:00:00", 37800, "2024-07-01 10:30:00+10:30"},
		{"Australia/Lord_Howe", false, "2024-01-01 00:00:00", 39600, "2024-01-01 11:00:00+11"},
		{"-7", false, "2024-01-01 00:00:00", -25200, "2023-12-31 17:00:00-07"},
		{"UTC+3", false, "2024-01-01 00:00:00", -10800, "2023-12-31 21:00:00-03"},
		{"+03", true, "2024-01-01 00:00:00", -10800, "2023-12-31 21:00:00-03"},
		{"-03:30", true, "2024-01-01 00:00:00", 12600, "2024-01-01 03:30:00+03:30"},
		{"PST", true, "2024-07-01 00:00:00", -28800, "2024-06-30 16:00:00-08"},
		{"UTC", false, "0044-03-15 12:00:00 BC", 0, "0044-03-15 12:00:00+00 BC"},
	} {
		var z *Zone
		var err error
		if c.at {
			z, err = ZoneAt(c.zone)
		} else {
			z, err = LoadZone(c.zone)
		}
		if err != nil {
			t.Fatalf("%s: %v", c.zone, err)
		}
		u := mustParseTS(t, c.utc)
		if got := z.OffsetAt(u); got != c.off {
			t.Errorf("%s at %s: offset %d, want %d", c.zone, c.utc, got, c.off)
		}
		if got := string(AppendTimestampTZ(nil, u, z)); got != c.local {
			t.Errorf("%s at %s: %q, want %q", c.zone, c.utc, got, c.local)
		}
	}
}

// TestFromLocalTransitions checks PostgreSQL's reading of local times at
// daylight saving transitions: a skipped time takes the offset before the
// transition, a repeated time the offset after it.
func TestFromLocalTransitions(t *testing.T) {
	for _, c := range []struct {
		zone, local, want string
	}{
		// New York springs forward at 2024-03-10 02:00 EST.
		{"America/New_York", "2024-03-10 01:59:59", "2024-03-10 06:59:59"},
		{"America/New_York", "2024-03-10 02:00:00", "2024-03-10 07:00:00"}, // 03:00 EDT
		{"America/New_York", "2024-03-10 02:30:00", "2024-03-10 07:30:00"}, // 03:30 EDT
		{"America/New_York", "2024-03-10 03:00:00", "2024-03-10 07:00:00"},
		// ... and falls back at 2024-11-03 02:00 EDT: 01:xx happens twice.
		{"America/New_York", "2024-11-03 00:59:59", "2024-11-03 04:59:59"},
		{"America/New_York", "2024-11-03 01:00:00", "2024-11-03 06:00:00"}, // EST
		{"America/New_York", "2024-11-03 01:30:00", "2024-11-03 06:30:00"},
		{"America/New_York", "2024-11-03 02:00:00", "2024-11-03 07:00:00"},
		// Berlin: 2024-03-31 02:00 CET -> 03:00 CEST; 2024-10-27 03:00 CEST -> 02:00 CET.
		{"Europe/Berlin", "2024-03-31 02:30:00", "2024-03-31 01:30:00"}, // 03:30 CEST
		{"Europe/Berlin", "2024-03-31 03:00:00", "2024-03-31 01:00:00"},
		{"Europe/Berlin", "2024-10-27 02:30:00", "2024-10-27 01:30:00"}, // CET
		{"Europe/Berlin", "2024-10-27 01:59:00", "2024-10-26 23:59:00"},
		// Lord Howe moves by 30 minutes: 2024-04-07 02:00 +11 -> 01:30 +10:30,
		// 2024-10-06 02:00 +10:30 -> 02:30 +11.
		{"Australia/Lord_Howe", "2024-04-07 01:45:00", "2024-04-06 15:15:00"}, // +10:30
		{"Australia/Lord_Howe", "2024-10-06 02:15:00", "2024-10-05 15:45:00"}, // gap: +10:30
		{"Asia/Kolkata", "2024-06-01 00:00:00", "2024-05-31 18:30:00"},
		{"America/New_York", "1850-01-01 00:00:00", "1850-01-01 04:56:02"}, // LMT
		{"America/New_York", "2200-07-01 12:00:00", "2200-07-01 16:00:00"}, // past the table
	} {
		z, err := LoadZone(c.zone)
		if err != nil {
			t.Fatal(err)
		}
		got := z.FromLocal(mustParseTS(t, c.local) + 123)
		if want := mustParseTS(t, c.want) + 123; got != want {
			t.Errorf("%s %s: %s, want %s", c.zone, c.local,
				AppendTimestamp(nil, got, false), AppendTimestamp(nil, want, false))
		}
	}
}

func TestParseTimestampTZIn(t *testing.T) {
	z, _ := LoadZone("Europe/Berlin")
	for _, c := range []struct{ in, want string }{
		{"2024-03-31 02:30", "2024-03-31 03:30:00+02"},
		{"2024-01-01", "2024-01-01 00:00:00+01"},
		{"2024-01-01 12:00+05:30", "2024-01-01 07:30:00+01"},
		{"2024-01-01 12:00Z", "2024-01-01 13:00:00+01"},
	} {
		v, err := ParseTimestampTZ(c.in, z)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(AppendTimestampTZ(nil, v, z)); got != c.want {
			t.Errorf("%q: %q, want %q", c.in, got, c.want)
		}
	}
}

func TestZoneFormatNoAlloc(t *testing.T) {
	z, _ := LoadZone("America/New_York")
	buf := make([]byte, 0, 64)
	u := mustParseTS(t, "2024-03-10 07:30:00")
	if n := testing.AllocsPerRun(100, func() {
		buf = AppendTimestampTZ(buf[:0], u, z)
		_ = z.FromLocal(u)
		if _, err := ZoneAt("Europe/Berlin"); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("%v allocations per row", n)
	}
}

func TestParseZoneNames(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"2024-01-01 12:00 Europe/Berlin", "2024-01-01 11:00:00+00"},
		{"2024-07-01 12:00 america/new_york", "2024-07-01 16:00:00+00"},
		{"2024-03-10 02:30 America/New_York", "2024-03-10 07:30:00+00"},
		{"2024-07-01 12:00 CEST", "2024-07-01 10:00:00+00"},
		{"2024-07-01 12:00 Etc/GMT+3", "2024-07-01 15:00:00+00"},
	} {
		v, err := parseTimestamp(TimestampTZT, c.in)
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if got := string(AppendTimestampTZ(nil, v, UTC)); got != c.want {
			t.Errorf("%q: %q, want %q", c.in, got, c.want)
		}
	}
	if v, err := parseTimestamp(TimestampT, "2024-01-01 12:00 Europe/Berlin"); err != nil ||
		string(AppendTimestamp(nil, v, false)) != "2024-01-01 12:00:00" {
		t.Errorf("timestamp input with a zone name: %v", err)
	}
	if _, err := parseTimestamp(TimestampTZT, "2024-01-01 12:00 Mars/Base"); err == nil {
		t.Error("an unknown zone name was accepted")
	}
}

// TestFromLocalSweep reads every quarter hour of two years of local time in
// zones with transitions of one hour, half an hour and odd offsets: a local
// time that exists converts back to itself with no later reading, and one
// that does not is in a gap, read with the offset before it.
func TestFromLocalSweep(t *testing.T) {
	const step = 15 * 60 * microsPerSecond
	start := mustParseTS(t, "2023-01-01 00:00:00")
	for _, name := range []string{"America/New_York", "Europe/Berlin", "Australia/Lord_Howe", "Asia/Kolkata", "America/St_Johns", "Europe/Moscow"} {
		z, err := LoadZone(name)
		if err != nil {
			t.Fatal(err)
		}
		for l := start; l < start+2*365*microsPerDay; l += step {
			u := z.FromLocal(l)
			if z.ToLocal(u) == l {
				for _, later := range []int64{30, 60, 120} {
					if v := u + later*microsPerMinute; z.ToLocal(v) == l {
						t.Fatalf("%s %s: read as %d, but %d minutes later reads the same", name, AppendTimestamp(nil, l, false), u, later)
					}
				}
				continue
			}
			// A gap: the offset before the transition, so the result lands
			// after it by as much as l is past the gap's start.
			before := z.OffsetAt(u - 3*microsPerHour)
			if want := l - int64(before)*microsPerSecond; u != want {
				t.Fatalf("%s %s in a gap: %d, want %d", name, AppendTimestamp(nil, l, false), u, want)
			}
		}
	}
}
