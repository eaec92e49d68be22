package lakegc_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"gocloud.dev/blob/fileblob"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/linkaddr"
	"github.com/lakegc/lakegc/pathprovider"
	"github.com/lakegc/lakegc/sweep"
	"github.com/lakegc/lakegc/uncommitted"
)

// linkRace is the reduced case of a lost link on one simulated clock, through
// Collect with Sweep over a fileblob bucket: an address handed out at T, the
// object uploaded at once (its modification time T), its link verified at
// verifyAt, and its staging write landing at stageAt; a GC cycle runs in
// between, one second before the write lands, when the link is in no input
// and only the object's age protects it. It reports whether the object is
// still there once the staging write is in.
type linkRace struct {
	t         *testing.T
	handedOut time.Time
	now       time.Time
	paths     *pathprovider.Partitioned
	signer    *linkaddr.Signer
	host      *memHost
	dir       string
	cfg       lakegc.Config
}

func newLinkRace(t *testing.T) *linkRace {
	t.Helper()
	r := &linkRace{t: t, handedOut: time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC), host: newMemHost(), dir: t.TempDir()}
	r.now = r.handedOut
	clock := func() time.Time { return r.now }
	var err error
	if r.paths, err = pathprovider.New(pathprovider.WithClock(clock)); err != nil {
		t.Fatal(err)
	}
	if r.signer, err = linkaddr.New([]byte("key"), r.paths, linkaddr.WithClock(clock)); err != nil {
		t.Fatal(err)
	}
	bucket, err := fileblob.OpenBucket(r.dir, &fileblob.Options{Metadata: fileblob.MetadataDontWrite})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bucket.Close() })
	r.host.createBranch("main", "")
	r.cfg = lakegc.Config{Bucket: bucket, Namespace: "file://" + filepath.ToSlash(r.dir), Repository: "repo1",
		Signer: r.signer, Clock: clock, Sweep: true, MemoryBudget: 64 << 10}
	if err := lakegc.InitNamespace(context.Background(), r.cfg); err != nil {
		t.Fatal(err)
	}
	return r
}

// upload hands out an address at r.now, signs it and writes the object,
// dated r.now as the store would date it (fileblob stamps the wall clock).
func (r *linkRace) upload(path string) (signed string) {
	r.t.Helper()
	address := r.paths.NewPath()
	signed, err := r.signer.Sign("repo1", "main", path, address)
	if err != nil {
		r.t.Fatal(err)
	}
	if err := r.cfg.Bucket.WriteAll(context.Background(), address, []byte(path), nil); err != nil {
		r.t.Fatal(err)
	}
	if err := os.Chtimes(filepath.Join(r.dir, filepath.FromSlash(address)), r.now, r.now); err != nil {
		r.t.Fatal(err)
	}
	return signed
}

// gc runs a cycle at r.now.
func (r *linkRace) gc() *lakegc.Report {
	r.t.Helper()
	rep, err := lakegc.Collect(context.Background(), r.host.host(), r.cfg)
	if err != nil {
		r.t.Fatal(err)
	}
	return rep
}

func (r *linkRace) exists(address string) bool {
	ok, err := r.cfg.Bucket.Exists(context.Background(), address)
	if err != nil {
		r.t.Fatal(err)
	}
	return ok
}

// TestStagingMarginLakeFSLink is the reduced case with a link verified as
// lakeFS verifies it, against the whole TTL (at T+23h58m, which linkaddr
// refuses), and staged minutes later without Stage: Collect's cutoff keeps
// StagingMargin on top of the clock skew, so the object survives a staging
// write up to the TTL's end plus the skew plus the margin; past that it is
// deleted, as the host broke the contract. Without the margin (a cutoff of
// only the clock skew past the TTL) every write later than 7 minutes, the
// 13 of the case first found included, lost its object.
func TestStagingMarginLakeFSLink(t *testing.T) {
	const verifiedAfter = 23*time.Hour + 58*time.Minute
	// The last write that survives: a cycle one second before it has its
	// cutoff at T.
	lastSafe := linkaddr.DefaultTTL + sweep.DefaultClockSkew + sweep.StagingMargin - verifiedAfter + time.Second
	withoutMargin := lastSafe - sweep.StagingMargin // 7 minutes and a second
	for _, tc := range []struct {
		stagedAfter time.Duration // from the verification
		survives    bool
	}{
		{5 * time.Minute, true},
		{6 * time.Minute, true},
		{13 * time.Minute, true}, // the write of the case first found
		{lastSafe, true},
		{lastSafe + time.Second, false},
	} {
		r := newLinkRace(t)
		signed := r.upload("tables/t/part-0.parquet")
		address, _, _ := linkaddr.Split(signed)

		r.now = r.handedOut.Add(verifiedAfter)
		if _, err := r.signer.Verify("repo1", "main", "tables/t/part-0.parquet", signed); !errors.Is(err, linkaddr.ErrExpired) {
			t.Fatalf("linkaddr's Verify at T+23h58m = %v; want ErrExpired (less than the staging margin left)", err)
		}
		stageAt := r.now.Add(tc.stagedAfter)
		r.now = stageAt.Add(-time.Second)
		rep := r.gc()
		r.now = stageAt
		r.host.stage("main", uncommitted.Entry{Key: "tables/t/part-0.parquet", PhysicalAddress: address, CreationDate: stageAt})

		if got := r.exists(address); got != tc.survives {
			t.Errorf("staged %v after a full-TTL verification: object there %v, want %v (cutoff %v, handed out %v)",
				tc.stagedAfter, got, tc.survives, rep.Mark.Summary.CutoffTime, r.handedOut)
		}
		// The other side of the margin: the cutoff without it is past T
		// for every write later than the skew allows, the 13 minutes
		// of the case first found included.
		if old := rep.Mark.Summary.CutoffTime.Add(sweep.StagingMargin); tc.stagedAfter > withoutMargin && !old.After(r.handedOut) {
			t.Errorf("staged %v after: the cutoff less the margin, %v, would have kept the object: the case does not need the margin", tc.stagedAfter, old)
		}
	}
}

// TestStagingMarginStage is the reduced case with linkaddr: Verify leaves
// StagingMargin to stage, and Stage undoes a write that lands past the
// deadline. A link verified at the last moment Verify allows and staged
// within the margin survives a cycle run just before its write; one staged
// later is undone, so no staged entry points at an object the GC may take.
func TestStagingMarginStage(t *testing.T) {
	for _, tc := range []struct {
		stagedAfter time.Duration
		staged      bool
	}{
		{5 * time.Minute, true},
		{6 * time.Minute, true},
		{linkaddr.StagingMargin, true},
		{linkaddr.StagingMargin + time.Second, false},
		{13*time.Minute + linkaddr.StagingMargin, false},
	} {
		r := newLinkRace(t)
		signed := r.upload("p")
		r.now = r.handedOut.Add(linkaddr.DefaultTTL - linkaddr.StagingMargin)
		link, err := r.signer.VerifyOnce(context.Background(), linkaddr.NewMemRedeemer(), "repo1", "main", "p", signed)
		if err != nil {
			t.Fatalf("VerifyOnce at the TTL less the margin: %v", err)
		}
		stageAt := r.now.Add(tc.stagedAfter)
		write := func(context.Context) error {
			r.now = stageAt.Add(-time.Second)
			r.gc() // a cycle just before the write lands
			r.now = stageAt
			r.host.stage("main", uncommitted.Entry{Key: "p", PhysicalAddress: link.Address, CreationDate: stageAt})
			return nil
		}
		undo := func(context.Context) error { r.host.unstage("main", "p"); return nil }
		err = r.signer.Stage(context.Background(), link, write, undo)
		if (err == nil) != tc.staged {
			t.Errorf("staged %v after the verification: Stage = %v; want it to succeed: %v", tc.stagedAfter, err, tc.staged)
		}
		if tc.staged && !r.exists(link.Address) {
			t.Errorf("staged %v after the verification, by the deadline: the object is gone", tc.stagedAfter)
		}
		_, stillStaged := r.host.branches["main"].staging["p"]
		if stillStaged != tc.staged {
			t.Errorf("staged %v after: entry staged %v after Stage, want %v", tc.stagedAfter, stillStaged, tc.staged)
		}
	}
}

// Collect refuses the breaks of the host contract it can see in its
// Config: a slice interval that is not below the minimum age, and a link
// TTL other than the signer's.
func TestCollectRefusesContractBreaks(t *testing.T) {
	r := newLinkRace(t)
	long, err := linkaddr.New([]byte("key"), r.paths, linkaddr.WithTTL(48*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		edit func(*lakegc.Config)
		ok   bool
	}{
		{"defaults", func(*lakegc.Config) {}, true},
		{"slice interval just below the min age", func(c *lakegc.Config) { c.SliceInterval = 24*time.Hour - time.Second }, true},
		{"slice interval at the min age", func(c *lakegc.Config) { c.SliceInterval = 24 * time.Hour }, false},
		{"slice interval above a longer min age", func(c *lakegc.Config) { c.SliceInterval, c.MinAge = 49*time.Hour, 48*time.Hour }, false},
		{"negative slice interval", func(c *lakegc.Config) { c.SliceInterval = -time.Hour }, false},
		{"LinkTTL as the signer's", func(c *lakegc.Config) { c.LinkTTL = linkaddr.DefaultTTL }, true},
		{"LinkTTL other than the signer's", func(c *lakegc.Config) { c.LinkTTL = 12 * time.Hour }, false},
		{"LinkTTL from a longer signer", func(c *lakegc.Config) { c.Signer = long }, true},
		{"min age below a longer signer's TTL", func(c *lakegc.Config) { c.Signer, c.MinAge = long, 24*time.Hour }, false},
		{"default LinkTTL, longer signer", func(c *lakegc.Config) { c.Signer, c.LinkTTL = long, lakegc.DefaultLinkTTL }, false},
	} {
		cfg := r.cfg
		tc.edit(&cfg)
		err := cfg.Validate()
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, lakegc.ErrInvalidInput)) {
			t.Errorf("%s: Validate = %v; want ok %v", tc.name, err, tc.ok)
		}
		if !tc.ok {
			if _, err := lakegc.Collect(context.Background(), r.host.host(), cfg); !errors.Is(err, lakegc.ErrInvalidInput) {
				t.Errorf("%s: Collect = %v; want ErrInvalidInput", tc.name, err)
			}
		}
	}
	// The signer's TTL is the floor of the min age: the cutoff follows it.
	cfg := r.cfg
	cfg.Signer, cfg.Sweep = long, false
	rep, err := lakegc.Collect(context.Background(), r.host.host(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if want := r.now.Add(-48*time.Hour - sweep.DefaultClockSkew - sweep.StagingMargin); !rep.Mark.Summary.CutoffTime.Equal(want) {
		t.Errorf("cutoff %v with a 48 h signer, want %v", rep.Mark.Summary.CutoffTime, want)
	}
}
