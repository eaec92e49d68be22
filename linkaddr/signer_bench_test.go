package linkaddr_test

import (
	"testing"
	"time"

	"github.com/lakegc/lakegc/linkaddr"
)

func benchSigner(b *testing.B) (*linkaddr.Signer, string) {
	p := mustProvider(b, time.Now)
	return mustSigner(b, testKey, p), p.NewPath()
}

func BenchmarkSign(b *testing.B) {
	s, address := benchSigner(b)
	b.ReportAllocs()
	var signed string
	for b.Loop() {
		signed, _ = s.Sign("repo1", "main", "tables/events/date=2026-11-30/part-00001.parquet", address)
	}
	if got, err := s.Verify("repo1", "main", "tables/events/date=2026-11-30/part-00001.parquet", signed); err != nil || got.Address != address {
		b.Fatalf("Verify of the last signature = %+v, %v; want %q", got, err, address)
	}
}

// BenchmarkSignEscaped signs a path that needs JSON escaping, which goes
// through encoding/json.
func BenchmarkSignEscaped(b *testing.B) {
	s, address := benchSigner(b)
	b.ReportAllocs()
	var signed string
	for b.Loop() {
		signed, _ = s.Sign("repo1", "main", "tables/a<b>&c/données.parquet", address)
	}
	if got, err := s.Verify("repo1", "main", "tables/a<b>&c/données.parquet", signed); err != nil || got.Address != address {
		b.Fatalf("Verify of the last signature = %+v, %v; want %q", got, err, address)
	}
}

func BenchmarkVerify(b *testing.B) {
	s, address := benchSigner(b)
	const path = "tables/events/date=2026-11-30/part-00001.parquet"
	signed := mustSign(b, s, "repo1", "main", path, address)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Verify("repo1", "main", path, signed); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerifyRotated verifies a signature of the last of three keys.
func BenchmarkVerifyRotated(b *testing.B) {
	p := mustProvider(b, time.Now)
	address := p.NewPath()
	signed := mustSign(b, mustSigner(b, "oldest", p), "repo1", "main", "p", address)
	s := mustSigner(b, testKey, p, linkaddr.WithVerifyKeys([]byte("older"), []byte("oldest")))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Verify("repo1", "main", "p", signed); err != nil {
			b.Fatal(err)
		}
	}
}
