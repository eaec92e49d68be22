package linkaddr_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/lakegc/lakegc/linkaddr"
	"github.com/lakegc/lakegc/pathprovider"
)

const testKey = "k3y-that-must-never-leak-0123456789"

// stoppedClock returns a clock that always says t.
func stoppedClock(t time.Time) func() time.Time { return func() time.Time { return t } }

// resolverFunc adapts a function to linkaddr.TimeResolver.
type resolverFunc func(address string) (time.Time, error)

func (f resolverFunc) ResolvePathTime(address string) (time.Time, error) { return f(address) }

func mustSigner(t testing.TB, key string, resolver linkaddr.TimeResolver, opts ...linkaddr.Option) *linkaddr.Signer {
	t.Helper()
	s, err := linkaddr.New([]byte(key), resolver, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// mustSign signs valid UTF-8 input, failing the test on an error.
func mustSign(t testing.TB, s *linkaddr.Signer, repository, branch, path, address string) string {
	t.Helper()
	signed, err := s.Sign(repository, branch, path, address)
	if err != nil {
		t.Fatal(err)
	}
	return signed
}

func mustProvider(t testing.TB, now func() time.Time) *pathprovider.Partitioned {
	t.Helper()
	p, err := pathprovider.New(pathprovider.WithClock(now))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestNewRejects(t *testing.T) {
	p := mustProvider(t, time.Now)
	for _, tc := range []struct {
		name     string
		key      []byte
		resolver linkaddr.TimeResolver
		opts     []linkaddr.Option
	}{
		{"nil key", nil, p, nil},
		{"empty key", []byte{}, p, nil},
		{"nil resolver", []byte(testKey), nil, nil},
		{"negative TTL", []byte(testKey), p, []linkaddr.Option{linkaddr.WithTTL(-time.Hour)}},
		{"empty verify key", []byte(testKey), p, []linkaddr.Option{linkaddr.WithVerifyKeys([]byte("old"), nil)}},
		{"nil option", []byte(testKey), p, []linkaddr.Option{nil}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := linkaddr.New(tc.key, tc.resolver, tc.opts...)
			if err == nil || s != nil {
				t.Fatalf("New = %v, %v; want an error", s, err)
			}
			assertNoKey(t, err, testKey)
		})
	}
}

// assertNoKey fails when err's message holds the key in any usual spelling.
func assertNoKey(t *testing.T, err error, key string) {
	t.Helper()
	msg := err.Error()
	for _, spelling := range []string{
		key,
		hex.EncodeToString([]byte(key)),
		base64.StdEncoding.EncodeToString([]byte(key)),
		base64.RawURLEncoding.EncodeToString([]byte(key)),
		key[:8],
	} {
		if strings.Contains(msg, spelling) {
			t.Fatalf("error %q reveals the key", msg)
		}
	}
}

func TestVerifyRejections(t *testing.T) {
	now := time.Date(2026, 11, 30, 5, 0, 0, 0, time.UTC)
	clock := now
	p := mustProvider(t, func() time.Time { return clock })
	s := mustSigner(t, testKey, p, linkaddr.WithClock(func() time.Time { return clock }), linkaddr.WithTTL(time.Hour))
	other := mustSigner(t, "another key", p, linkaddr.WithClock(func() time.Time { return clock }))

	address := p.NewPath()
	signed := mustSign(t, s, "repo", "main", "a/b.csv", address)
	sig := signed[strings.LastIndex(signed, ",")+1:]
	mac, _ := base64.RawURLEncoding.DecodeString(sig)
	flipped := []byte(sig)
	flipped[10] ^= 1 // another base64url letter

	// The last of 43 characters carries 4 bits of the MAC and 2 padding bits
	// that must be zero; a lenient decoder maps this spelling to the same MAC.
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	last := strings.IndexByte(alphabet, sig[42])
	nonCanonical := sig[:42] + string(alphabet[last|1])

	otherAddress := p.NewPath()

	for _, tc := range []struct {
		name                     string
		repository, branch, path string
		signed                   string
		at                       time.Time
		want                     error
	}{
		{"tampered signature", "repo", "main", "a/b.csv", address + "," + string(flipped), now, linkaddr.ErrInvalid},
		{"another repository", "repo2", "main", "a/b.csv", signed, now, linkaddr.ErrInvalid},
		{"another branch", "repo", "dev", "a/b.csv", signed, now, linkaddr.ErrInvalid},
		{"another path", "repo", "main", "a/b.csv2", signed, now, linkaddr.ErrInvalid},
		{"another address", "repo", "main", "a/b.csv", otherAddress + "," + sig, now, linkaddr.ErrInvalid},
		{"fields shifted", "repomain", "", "a/b.csv", signed, now, linkaddr.ErrInvalid},
		{"signed by another key", "repo", "main", "a/b.csv", mustSign(t, other, "repo", "main", "a/b.csv", address), now, linkaddr.ErrInvalid},
		{"no delimiter", "repo", "main", "a/b.csv", address + sig, now, linkaddr.ErrInvalid},
		{"empty", "repo", "main", "a/b.csv", "", now, linkaddr.ErrInvalid},
		{"empty signature", "repo", "main", "a/b.csv", address + ",", now, linkaddr.ErrInvalid},
		{"bad base64", "repo", "main", "a/b.csv", address + "," + strings.Repeat("!", 43), now, linkaddr.ErrInvalid},
		{"standard instead of URL alphabet", "repo", "main", "a/b.csv", address + "," + strings.Repeat("+", 43), now, linkaddr.ErrInvalid},
		{"padded base64", "repo", "main", "a/b.csv", address + "," + base64.URLEncoding.EncodeToString(mac), now, linkaddr.ErrInvalid},
		{"non-canonical last character", "repo", "main", "a/b.csv", address + "," + nonCanonical, now, linkaddr.ErrInvalid},
		{"newline inside", "repo", "main", "a/b.csv", address + "," + sig[:20] + "\n" + sig[20:], now, linkaddr.ErrInvalid},
		{"signature too short", "repo", "main", "a/b.csv", address + "," + base64.RawURLEncoding.EncodeToString(mac[:16]), now, linkaddr.ErrInvalid},
		{"signature too long", "repo", "main", "a/b.csv", signed + "AAAA", now, linkaddr.ErrInvalid},
		{"truncated MAC", "repo", "main", "a/b.csv", address + "," + sig[:42], now, linkaddr.ErrInvalid},
		{"expired", "repo", "main", "a/b.csv", signed, now.Add(time.Hour + time.Second), linkaddr.ErrExpired},
		{"from more than a minute in the future", "repo", "main", "a/b.csv", signed, now.Add(-time.Minute - time.Second), linkaddr.ErrInvalid},
		{"time cannot be resolved", "repo", "main", "a/b.csv", mustSign(t, s, "repo", "main", "a/b.csv", "data/x/not-an-xid"), now, linkaddr.ErrInvalid},
		{"accepted: new", "repo", "main", "a/b.csv", signed, now, nil},
		{"inside the staging margin", "repo", "main", "a/b.csv", signed, now.Add(time.Hour - linkaddr.StagingMargin + time.Second), linkaddr.ErrExpired},
		{"accepted: at the TTL less the staging margin", "repo", "main", "a/b.csv", signed, now.Add(time.Hour - linkaddr.StagingMargin), nil},
		{"accepted: a minute in the future", "repo", "main", "a/b.csv", signed, now.Add(-time.Minute), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock = tc.at
			got, err := s.Verify(tc.repository, tc.branch, tc.path, tc.signed)
			if tc.want == nil {
				// The deadline is the end of the TTL: the address was made at now.
				if want := (linkaddr.Link{Address: address, Deadline: now.Add(time.Hour)}); err != nil || got != want {
					t.Fatalf("Verify = %+v, %v; want %+v", got, err, want)
				}
				return
			}
			if !errors.Is(err, tc.want) || got != (linkaddr.Link{}) {
				t.Fatalf("Verify = %+v, %v; want %v", got, err, tc.want)
			}
			if errors.Is(err, linkaddr.ErrInvalid) == errors.Is(err, linkaddr.ErrExpired) {
				t.Fatalf("error %v wraps both or neither sentinel", err)
			}
			assertNoKey(t, err, testKey)
		})
	}
}

// TestVerifyRejectsEveryBitFlip flips each bit of the MAC in turn: every
// byte of the signature counts.
func TestVerifyRejectsEveryBitFlip(t *testing.T) {
	p := mustProvider(t, time.Now)
	s := mustSigner(t, testKey, p)
	address := p.NewPath()
	signed := mustSign(t, s, "r", "b", "p", address)
	mac, err := base64.RawURLEncoding.DecodeString(signed[len(address)+1:])
	if err != nil {
		t.Fatal(err)
	}
	// The unflipped signature verifies, and has bits to flip: else every
	// "rejected" below would prove nothing.
	if got, err := s.Verify("r", "b", "p", signed); err != nil || got.Address != address || len(mac) < 16 {
		t.Fatalf("Verify of the signature itself = %+v, %v (%d-byte MAC); want %q", got, err, len(mac), address)
	}
	for bit := range 8 * len(mac) {
		mac[bit/8] ^= 1 << (bit % 8)
		forged := address + "," + base64.RawURLEncoding.EncodeToString(mac)
		if _, err := s.Verify("r", "b", "p", forged); !errors.Is(err, linkaddr.ErrInvalid) {
			t.Fatalf("bit %d flipped: err = %v", bit, err)
		}
		mac[bit/8] ^= 1 << (bit % 8)
	}
}

func TestUnresolvableTimeKeepsTheCause(t *testing.T) {
	s := mustSigner(t, testKey, mustProvider(t, time.Now))
	_, err := s.Verify("r", "b", "p", mustSign(t, s, "r", "b", "p", "data/slice/not-an-xid"))
	if !errors.Is(err, linkaddr.ErrInvalid) || !errors.Is(err, pathprovider.ErrInvalidAddress) {
		t.Fatalf("err = %v; want ErrInvalid wrapping the resolver's error", err)
	}
}

func TestKeyRotation(t *testing.T) {
	p := mustProvider(t, time.Now)
	oldKey, newKey := "old key", "new key"
	before := mustSigner(t, oldKey, p)
	during := mustSigner(t, newKey, p, linkaddr.WithVerifyKeys([]byte("unrelated"), []byte(oldKey)))
	after := mustSigner(t, newKey, p)

	address := p.NewPath()
	signedOld := mustSign(t, before, "r", "b", "p", address)
	signedNew := mustSign(t, during, "r", "b", "p", address)
	if signedNew == signedOld {
		t.Fatal("Sign used a verify key")
	}
	for _, tc := range []struct {
		name   string
		s      *linkaddr.Signer
		signed string
		ok     bool
	}{
		{"old signature, during rotation", during, signedOld, true},
		{"new signature, during rotation", during, signedNew, true},
		{"new signature, after", after, signedNew, true},
		{"old signature, after", after, signedOld, false},
		{"new signature, before", before, signedNew, false},
	} {
		_, err := tc.s.Verify("r", "b", "p", tc.signed)
		if (err == nil) != tc.ok {
			t.Errorf("%s: err = %v", tc.name, err)
		}
	}
}

func TestSignerKeepsItsOwnKeyCopy(t *testing.T) {
	key := []byte(testKey)
	old := []byte("old key")
	p := mustProvider(t, time.Now)
	s := mustSigner(t, string(key), p, linkaddr.WithVerifyKeys(old))
	address := p.NewPath()
	signed := mustSign(t, s, "r", "b", "p", address)
	signedOld := mustSign(t, mustSigner(t, "old key", p), "r", "b", "p", address)
	key[0]++
	old[0]++
	if _, err := s.Verify("r", "b", "p", signed); err != nil {
		t.Fatalf("changing the caller's key slice changed the Signer: %v", err)
	}
	if _, err := s.Verify("r", "b", "p", signedOld); err != nil {
		t.Fatalf("changing the caller's verify key slice changed the Signer: %v", err)
	}
}

// FuzzVerify feeds Verify arbitrary inputs. It must never panic, and it
// accepts a string only when it is exactly what Sign writes for the same
// repository, branch, path and address, which must all be valid UTF-8. Sign
// must also match a signature computed by hand from encoding/json, and
// verify; for input that is not valid UTF-8, Sign must refuse, and the
// hand-made signature must not verify.
func FuzzVerify(f *testing.F) {
	made := time.Date(2026, 11, 30, 5, 0, 0, 0, time.UTC)
	anyAddressIsNew := resolverFunc(func(string) (time.Time, error) { return made, nil })
	s, err := linkaddr.New([]byte(testKey), anyAddressIsNew, linkaddr.WithClock(stoppedClock(made)))
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range [][4]string{
		{"repo", "main", "a/b.csv", "data/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0"},
		{"r&d", "feature<1>", "a<b>&c,d", "s3://b/a,b/data/x/y"},
		{"dépôt", "主", "x\u2028y", "bad\xffbyte"},
		{"", "", "", ""},
		{"r", "b", "a<b", "x"},
		{"r", "b", "a>b", "x"},
		{"r", "b", "a&b", "x"},
		{"r", "b", "a\"b\\c", "x"},
		{"r", "b", "a\x00\x1f\x7f", "x"},
		{"r", "b", "a\xff", "x"},
		{"r", "b", "a\xfe", "x"},
		{"r\xc3", "b", "p", "x"},
		{"r", "b\xed\xa0\x80", "p", "x"}, // an encoded surrogate
	} {
		if signed, err := s.Sign(seed[0], seed[1], seed[2], seed[3]); err == nil {
			f.Add(seed[0], seed[1], seed[2], signed)
		}
		f.Add(seed[0], seed[1], seed[2], seed[3])
	}
	f.Add("repo", "main", "p", "addr,cPWPReDC_to7BOmMGSy0YReW9aWIv819XlODed5eSv=")
	f.Add("r", "b", "a\xfe", "x,"+handMAC("r", "b", "a\xff", "x")) // signed for another invalid path
	f.Fuzz(func(t *testing.T, repository, branch, path, signed string) {
		link, err := s.Verify(repository, branch, path, signed)
		address := link.Address
		splitAddress, sig, ok := linkaddr.Split(signed)
		if ok && splitAddress+linkaddr.Delimiter+sig != signed {
			t.Fatalf("Split(%q) = %q, %q", signed, splitAddress, sig)
		}
		if err == nil && (!ok || splitAddress != address) {
			t.Fatalf("Verify accepted %q as %q, Split = %q, %q, %v", signed, address, splitAddress, sig, ok)
		}
		if err == nil {
			if want, err := s.Sign(repository, branch, path, address); err != nil || signed != want {
				t.Fatalf("Verify accepted %q, which Sign writes as %q, %v", signed, want, err)
			}
			if !utf8.ValidString(repository) || !utf8.ValidString(branch) || !utf8.ValidString(path) || !utf8.ValidString(address) {
				t.Fatalf("Verify accepted input that is not valid UTF-8: %q %q %q %q", repository, branch, path, signed)
			}
		} else if !errors.Is(err, linkaddr.ErrInvalid) && !errors.Is(err, linkaddr.ErrExpired) {
			t.Fatalf("Verify error %v wraps no sentinel", err)
		}

		// Treat the input as an address: signing it must verify, and match
		// the signature computed from encoding/json by hand, exactly when
		// every string is valid UTF-8.
		valid := utf8.ValidString(repository) && utf8.ValidString(branch) && utf8.ValidString(path) && utf8.ValidString(signed)
		hand := signed + "," + handMAC(repository, branch, path, signed)
		own, err := s.Sign(repository, branch, path, signed)
		if !valid {
			if !errors.Is(err, linkaddr.ErrInvalid) || own != "" {
				t.Fatalf("Sign of input that is not valid UTF-8 = %q, %v; want ErrInvalid", own, err)
			}
			for _, try := range []string{signed + ",", hand} {
				if got, err := s.Verify(repository, branch, path, try); !errors.Is(err, linkaddr.ErrInvalid) {
					t.Fatalf("Verify(%q) of input that is not valid UTF-8 = %+v, %v; want ErrInvalid", try, got, err)
				}
			}
			return
		}
		if err != nil {
			t.Fatalf("Sign = %q, %v", own, err)
		}
		if got, err := s.Verify(repository, branch, path, own); err != nil || got.Address != signed {
			t.Fatalf("Verify(Sign(%q)) = %+v, %v", signed, got, err)
		}
		if own != hand {
			t.Fatalf("Sign = %q, encoding/json by hand gives %q", own, hand)
		}
	})
}

// handMAC is a signature computed as lakeFS does, with encoding/json and
// crypto/hmac under testKey, whatever the input.
func handMAC(repository, branch, path, address string) string {
	payload, err := json.Marshal(struct{ Repository, Branch, Path, PhysicalAddress string }{repository, branch, path, address})
	if err != nil {
		panic(err) // four strings: cannot fail
	}
	mac := hmac.New(sha256.New, []byte(testKey))
	mac.Write(payload)
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// TestNonUTF8Refused signs, as lakeFS would, a path with an invalid byte,
// and links the address to another path whose invalid byte differs: the
// JSON payloads are equal (both bytes become U+FFFD), so only the UTF-8
// check stops the second link. The same for repository, branch and
// address, and Sign refuses to sign any of them.
func TestNonUTF8Refused(t *testing.T) {
	made := time.Date(2026, 11, 30, 5, 0, 0, 0, time.UTC)
	anyAddressIsNew := resolverFunc(func(string) (time.Time, error) { return made, nil })
	s := mustSigner(t, testKey, anyAddressIsNew, linkaddr.WithClock(stoppedClock(made)))
	address := "data/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0"
	for _, tc := range []struct {
		name                                     string
		repository, branch, path, address        string // signed for
		linkRepository, linkBranch, linkPath, at string // linked to, with the signature's address
	}{
		{"path", "repo", "main", "a\xff.csv", address, "repo", "main", "a\xfe.csv", address},
		{"same path", "repo", "main", "a\xff.csv", address, "repo", "main", "a\xff.csv", address},
		{"repository", "repo\xff", "main", "a.csv", address, "repo\x80", "main", "a.csv", address},
		{"branch", "repo", "m\xc3", "a.csv", address, "repo", "m\xc4", "a.csv", address},
		{"address", "repo", "main", "a.csv", address + "\xff", "repo", "main", "a.csv", address + "\xfe"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			forged := tc.at + "," + handMAC(tc.repository, tc.branch, tc.path, tc.address)
			if got, err := s.Verify(tc.linkRepository, tc.linkBranch, tc.linkPath, forged); !errors.Is(err, linkaddr.ErrInvalid) {
				t.Errorf("Verify of an address signed for %q %q %q %q = %q, %v; want ErrInvalid",
					tc.repository, tc.branch, tc.path, tc.address, got, err)
			}
			if got, err := s.Sign(tc.repository, tc.branch, tc.path, tc.address); !errors.Is(err, linkaddr.ErrInvalid) || got != "" {
				t.Errorf("Sign = %q, %v; want ErrInvalid", got, err)
			}
		})
	}
}

func TestSplit(t *testing.T) {
	s := mustSigner(t, testKey, resolverFunc(func(string) (time.Time, error) { return time.Now(), nil }))
	for _, address := range []string{"data/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0", "s3://b/a,b/data/x/y", "", ","} {
		signed := mustSign(t, s, "r", "b", "p", address)
		got, sig, ok := linkaddr.Split(signed)
		if !ok || got != address || address+","+sig != signed {
			t.Errorf("Split(%q) = %q, %q, %v; want %q", signed, got, sig, ok, address)
		}
		for _, bad := range []string{
			address,                      // not signed
			signed[:len(signed)-1],       // short
			signed + "A",                 // long
			signed[:len(signed)-1] + "x", // non-canonical last character (2 padding bits set)
			signed[:len(signed)-2] + "+A",
			address + ",",
		} {
			if got, sig, ok := linkaddr.Split(bad); ok && bad != signed {
				t.Errorf("Split(%q) = %q, %q, true; want false", bad, got, sig)
			}
		}
	}
}

// TestZeroOptionsAreDefaults: WithTTL(0) is DefaultTTL and WithClock(nil)
// time.Now; a negative TTL is an error of New.
func TestZeroOptionsAreDefaults(t *testing.T) {
	var age time.Duration
	resolver := resolverFunc(func(string) (time.Time, error) { return time.Now().Add(-age), nil })
	s := mustSigner(t, testKey, resolver, linkaddr.WithTTL(0), linkaddr.WithClock(nil))
	signed := mustSign(t, s, "r", "b", "p", "data/x/y")
	age = linkaddr.DefaultTTL - linkaddr.StagingMargin - time.Minute
	if _, err := s.Verify("r", "b", "p", signed); err != nil {
		t.Fatalf("Verify just under the default TTL less the staging margin: %v", err)
	}
	age = linkaddr.DefaultTTL - linkaddr.StagingMargin + time.Minute
	if _, err := s.Verify("r", "b", "p", signed); !errors.Is(err, linkaddr.ErrExpired) {
		t.Fatalf("Verify just over the default TTL less the staging margin = %v; want ErrExpired", err)
	}
	_, err := linkaddr.New([]byte(testKey), resolver, linkaddr.WithTTL(-time.Hour))
	if want := "linkaddr: invalid input: negative TTL -1h0m0s"; err == nil || err.Error() != want || !errors.Is(err, linkaddr.ErrInvalidInput) {
		t.Fatalf("New(WithTTL(-1h)) = %v; want %q", err, want)
	}
}
