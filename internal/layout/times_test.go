package layout

import (
	"testing"
	"time"
)

// TestTimes: a record's time is written in UTC whole seconds and read back
// as the same instant; any RFC 3339 offset and fraction, or none (UTC), is
// read; the zero time is ""; a year outside 1..9999, or anything else, is
// an error.
func TestTimes(t *testing.T) {
	at := time.Date(2024, 5, 1, 10, 0, 0, 500_000_000, time.FixedZone("CEST", 2*3600))
	if got := FormatTime(at); got != "2024-05-01T08:00:00Z" {
		t.Fatalf("FormatTime = %q", got)
	}
	if got := FormatTime(time.Time{}); got != "" {
		t.Fatalf("FormatTime(zero) = %q", got)
	}
	for s, want := range map[string]time.Time{
		"":                              {},
		"2024-05-01T08:00:00Z":          time.Date(2024, 5, 1, 8, 0, 0, 0, time.UTC),
		"2024-05-01T10:00:00.5+02:00":   time.Date(2024, 5, 1, 8, 0, 0, 500_000_000, time.UTC),
		"2024-05-01T08:00:00.123456789": time.Date(2024, 5, 1, 8, 0, 0, 123456789, time.UTC),
		"2024-05-01T08:00:00":           time.Date(2024, 5, 1, 8, 0, 0, 0, time.UTC),
		"0001-01-01T00:00:00Z":          time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
	} {
		got, err := ParseTime(s)
		if err != nil || !got.Equal(want) || got.Location() != time.UTC {
			t.Errorf("ParseTime(%q) = %v, %v; want %v in UTC", s, got, err, want)
		}
	}
	for _, s := range []string{"0000-12-31T23:00:00Z", "0001-01-01T00:30:00+01:00", "2024-05-01", "yesterday", "2024-05-01T08:00:00 Z", "9999-12-31T23:00:00-02:00"} {
		if got, err := ParseTime(s); err == nil {
			t.Errorf("ParseTime(%q) = %v, want an error", s, got)
		}
	}
}

// FuzzParseTime: ParseTime never panics, and a time it reads is written
// and read back as the same second.
func FuzzParseTime(f *testing.F) {
	for _, s := range []string{"", "2024-05-01T08:00:00Z", "2024-05-01T10:00:00.5+02:00", "2024-05-01T08:00:00", "0000-12-31T23:00:00Z", "9999-12-31T23:59:59.999999999-23:59"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tm, err := ParseTime(s)
		if err != nil {
			return
		}
		back, err := ParseTime(FormatTime(tm))
		if err != nil || !back.Equal(tm.Truncate(time.Second)) {
			t.Fatalf("%q: %v written %q read back %v, %v", s, tm, FormatTime(tm), back, err)
		}
	})
}
