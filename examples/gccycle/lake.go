package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"gocloud.dev/blob"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/copytrack"
	"github.com/lakegc/lakegc/linkaddr"
	"github.com/lakegc/lakegc/pathprovider"
	"github.com/lakegc/lakegc/retention"
)

// repoID names the example's one repository.
const repoID = "repo1"

// lake is the host: the versioned store's service, embedding the lakegc
// packages as a lakeFS-like server would. Data goes to the bucket (rooted at
// the repository's storage namespace); metadata stays in the store.
type lake struct {
	bucket    *blob.Bucket
	namespace string // the bucket's URI, for full addresses
	linkTTL   time.Duration
	store     *store
	clock     *simClock
	paths     *pathprovider.Partitioned
	links     *linkaddr.Signer
	redeem    linkaddr.Redeemer
	copies    *copytrack.Tracker
	rules     *retention.RulesStore
	// touch sets an object's modification time to the simulated time it
	// was written, when the bucket allows it (nil: the bucket's own time).
	touch func(key string, t time.Time) error
	log   *journal
}

func newLake(bucket *blob.Bucket, namespace string, clock *simClock, touch func(string, time.Time) error, log *journal) (*lake, error) {
	paths, err := pathprovider.New(pathprovider.WithClock(clock.Now))
	if err != nil {
		return nil, err
	}
	// A real host loads its signing key from its secret store.
	// The GC's minimum age must cover it: see gcRun.
	linkTTL := linkaddr.DefaultTTL
	links, err := linkaddr.New([]byte("gccycle example signing key"), paths,
		linkaddr.WithClock(clock.Now), linkaddr.WithTTL(linkTTL))
	if err != nil {
		return nil, err
	}
	copies, err := copytrack.New(copytrack.NewMemStore(), copytrack.WithClock(clock.Now))
	if err != nil {
		return nil, err
	}
	return &lake{
		bucket:    bucket,
		namespace: namespace,
		linkTTL:   linkTTL,
		store:     newStore(),
		clock:     clock,
		paths:     paths,
		links:     links,
		redeem:    linkaddr.NewMemRedeemer(),
		copies:    copies,
		rules:     retention.NewRulesStore(bucket),
		touch:     touch,
		log:       log,
	}, nil
}

// createRepository writes the namespace's marker object, as lakeFS does;
// a GC never deletes it.
func (l *lake) createRepository(ctx context.Context, rules *retention.Rules) error {
	if err := l.write(ctx, "dummy", nil); err != nil {
		return err
	}
	// lakegc's own marker, naming the namespace: Collect checks it.
	if err := lakegc.InitNamespace(ctx, lakegc.Config{Bucket: l.bucket, Namespace: l.namespace}); err != nil {
		return err
	}
	if err := l.store.createBranch("main", ""); err != nil {
		return err
	}
	if err := l.rules.Save(ctx, rules); err != nil {
		return err
	}
	l.log.event("", "create repository %s: branch main, object dummy, GC rules saved", repoID)
	return nil
}

// write stores data under a key and dates it with the simulated clock.
func (l *lake) write(ctx context.Context, key string, data []byte) error {
	if err := l.bucket.WriteAll(ctx, key, data, nil); err != nil {
		return err
	}
	if l.touch != nil {
		return l.touch(key, l.clock.Now())
	}
	return nil
}

// getAddress is the first step of an upload: the server hands the client a
// fresh physical address, signed for this repository, branch and path.
func (l *lake) getAddress(branch, path string) (string, error) {
	return l.links.Sign(repoID, branch, path, l.paths.NewPath())
}

// uploadTo is the client's step: it writes the data straight to the
// address it was given (here through the same bucket).
func (l *lake) uploadTo(ctx context.Context, signed string, data []byte) (string, error) {
	address, _, ok := linkaddr.Split(signed)
	if !ok {
		return "", fmt.Errorf("not a link address: %q", signed)
	}
	return address, l.write(ctx, address, data)
}

// link is the last step: the server verifies the signed address (once) and
// stages the object by the link's deadline (Stage undoes a late write).
func (l *lake) link(ctx context.Context, branch, path, signed string) (object, error) {
	link, err := l.links.VerifyOnce(ctx, l.redeem, repoID, branch, path, signed)
	if err != nil {
		return object{}, err
	}
	attrs, err := l.bucket.Attributes(ctx, link.Address)
	if err != nil {
		return object{}, err
	}
	o := object{Address: link.Address, Size: attrs.Size, Created: l.clock.Now()}
	stage := func(context.Context) error { return l.store.put(branch, path, o) }
	undo := func(context.Context) error {
		if b, err := l.store.branch(branch); err == nil && b.Staging[path].Address == o.Address {
			delete(b.Staging, path)
		}
		return nil
	}
	return o, l.links.Stage(ctx, link, stage, undo)
}

// upload runs the three steps of an upload.
func (l *lake) upload(ctx context.Context, branch, path string, data []byte) (object, error) {
	signed, err := l.getAddress(branch, path)
	if err != nil {
		return object{}, err
	}
	if _, err := l.uploadTo(ctx, signed, data); err != nil {
		return object{}, err
	}
	return l.link(ctx, branch, path, signed)
}

// rename is a shallow copy and a delete of the source. The copy record
// keeps the shared address alive for a GC whose branch scan saw neither
// path.
func (l *lake) rename(ctx context.Context, branch, src, dst string) (object, error) {
	o, ok := l.store.lookup(branch, src)
	if !ok {
		return object{}, fmt.Errorf("rename %s: no such path on %s", src, branch)
	}
	if err := l.copies.Track(ctx, copytrack.Copy{
		Repository: repoID, Branch: branch, SrcPath: src, DstPath: dst, PhysicalAddress: o.Address,
	}); err != nil {
		return object{}, err
	}
	if err := l.store.put(branch, dst, o); err != nil {
		return object{}, err
	}
	return o, l.store.remove(branch, src)
}

// commit commits a branch; its copy records are no longer needed, the
// commit protects their addresses.
func (l *lake) commit(ctx context.Context, branch, message string) (string, error) {
	date := l.clock.Now() // read before the staging area is committed
	id, err := l.store.commit(branch, message, date)
	if err != nil {
		return "", err
	}
	// Only the records older than the commit: a rename after it is in the
	// branch's next staging area.
	if _, err := l.copies.ForgetBranch(ctx, repoID, branch, date); err != nil {
		return "", err
	}
	return id, nil
}

// deleteBranch drops a branch, its staging and its copy records.
func (l *lake) deleteBranch(ctx context.Context, branch string) error {
	before := l.clock.Now()
	l.store.deleteBranch(branch)
	_, err := l.copies.ForgetBranch(ctx, repoID, branch, before)
	return err
}

// journal prints the story as it happens, each line dated with the
// simulated clock.
type journal struct {
	w     io.Writer
	clock *simClock
	err   error
}

func (j *journal) event(branch, format string, args ...any) {
	if branch != "" {
		branch += ":"
	}
	j.printf("  %s  %-8s %s\n", j.clock.label(j.clock.Now()), branch, fmt.Sprintf(format, args...))
}

func (j *journal) printf(format string, args ...any) {
	if j.err == nil {
		_, j.err = fmt.Fprintf(j.w, format, args...)
	}
}
