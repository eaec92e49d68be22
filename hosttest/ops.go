package hosttest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/lakegc/lakegc/linkaddr"
)

func (r *run) handle(e event) error {
	var err error
	switch e.kind {
	case evOp:
		r.res.Ops++
		err = r.op()
	case evUpload:
		err = r.upload(e.link)
	case evVerify:
		err = r.verify(e.link)
	case evStage:
		err = r.stage(e.link)
	}
	r.m.prune()
	if err != nil && !errors.Is(err, ErrLoss) {
		err = fmt.Errorf("hosttest: seed %d, cycle %d, %s: %w", r.opts.Seed, r.cycle, r.now.Format(time.DateTime), err)
	}
	return err
}

// op runs one random writer operation.
func (r *run) op() error {
	ids := r.m.branchIDs()
	branch := ids[r.rng.IntN(len(ids))]
	if branch == ingest && r.rng.IntN(10) != 0 {
		branch = "main"
	}
	b := r.m.branches[branch]
	path := fmt.Sprintf("tables/t/part-%02d", r.rng.IntN(numPath))
	switch n := r.rng.IntN(100); {
	case n < 40:
		return r.linkedPut(branch, path)
	case n < 55:
		return r.directPut(branch, path)
	case n < 67:
		if len(b.staged) == 0 {
			return r.directPut(branch, path)
		}
		path = minKey(b.staged)
		if err := r.store.Unstage(r.ctx, branch, path); err != nil {
			return fmt.Errorf("unstage: %w", err)
		}
		r.m.note(b.staged[path], "%s: unstaged from %s at %s", r.now.Format(time.DateTime), branch, path)
		delete(b.staged, path)
		r.logf("unstage %s:%s", branch, path)
	case n < 85:
		if len(b.staged) == 0 || branch == ingest {
			return r.directPut(branch, path)
		}
		id, err := r.store.Commit(r.ctx, branch, r.now)
		if err != nil {
			return fmt.Errorf("commit: %w", err)
		}
		if err := r.m.commit(branch, id, r.now); err != nil {
			return err
		}
		r.logf("commit %s on %s", id, branch)
	case n < 94:
		if len(ids) >= maxBr+1 {
			return r.linkedPut(branch, path)
		}
		r.nextBr++
		id := fmt.Sprintf("b%d", r.nextBr)
		if err := r.store.CreateBranch(r.ctx, id, branch); err != nil {
			return fmt.Errorf("create branch: %w", err)
		}
		r.m.createBranch(id, branch)
		r.logf("branch %s from %s", id, branch)
	default:
		if branch == "main" || branch == ingest {
			return r.directPut(branch, path)
		}
		if err := r.store.DeleteBranch(r.ctx, branch); err != nil {
			return fmt.Errorf("delete branch: %w", err)
		}
		for p, a := range b.staged {
			r.m.note(a, "%s: branch %s deleted, with %s staged", r.now.Format(time.DateTime), branch, p)
		}
		delete(r.m.branches, branch)
		r.logf("delete branch %s", branch)
	}
	return nil
}

// minKey returns the smallest key of a non-empty map.
func minKey(m map[string]string) string {
	first := true
	var k string
	for p := range m {
		if first || p < k {
			k, first = p, false
		}
	}
	return k
}

// write writes an object at address, dated now as a store would date it.
func (r *run) write(address, what string) error {
	if err := r.bucket.WriteAll(r.ctx, address, []byte(what), nil); err != nil {
		return fmt.Errorf("upload: %w", err)
	}
	if err := os.Chtimes(filepath.Join(r.dir, filepath.FromSlash(address)), r.now, r.now); err != nil {
		return fmt.Errorf("upload: %w", err)
	}
	r.m.objects[address] = &object{history: []string{fmt.Sprintf("%s: %s", r.now.Format(time.DateTime), what)}}
	return nil
}

// directPut is the host writing an object and staging it at once.
func (r *run) directPut(branch, path string) error {
	address := r.paths.NewPath()
	if err := r.write(address, fmt.Sprintf("written by the host for %s at %s, staged at once", branch, path)); err != nil {
		return err
	}
	if err := r.store.Stage(r.ctx, branch, path, address); err != nil {
		return fmt.Errorf("stage: %w", err)
	}
	r.replace(branch, path, address)
	r.logf("put %s:%s = %s", branch, path, address)
	return nil
}

// replace records address staged at path in the model.
func (r *run) replace(branch, path, address string) {
	b := r.m.branches[branch]
	if old, ok := b.staged[path]; ok {
		r.m.note(old, "%s: overwritten on %s at %s by %s", r.now.Format(time.DateTime), branch, path, address)
	}
	b.staged[path] = address
}

// linkedPut hands out a signed address and schedules the client's upload,
// the link's verification and its staging write.
func (r *run) linkedPut(branch, path string) error {
	address := r.paths.NewPath()
	signed, err := r.signer.Sign(repoID, branch, path, address)
	if err != nil {
		return fmt.Errorf("sign: %w", err)
	}
	// The signer dates the address to the second, as its time reads back.
	made, err := r.paths.ResolvePathTime(address)
	if err != nil {
		return fmt.Errorf("resolve: %w", err)
	}
	l := &link{branch: branch, path: path, address: address, signed: signed, handedOut: r.now, made: made, uploads: r.rng.IntN(20) != 0}
	last := made.Add(ttl - linkaddr.StagingMargin) // the last moment VerifyOnce passes
	switch n := r.rng.IntN(10); {
	case n < 7:
		l.uploadAt = r.now.Add(time.Duration(r.rng.Int64N(int64(30 * time.Minute))))
	default: // a slow client
		l.uploadAt = r.now.Add(time.Duration(r.rng.Int64N(int64(20 * time.Hour))))
	}
	switch n := r.rng.IntN(20); {
	case n < 10:
		l.verifyAt = l.uploadAt.Add(time.Duration(r.rng.Int64N(int64(30 * time.Minute))))
	case n < 17: // just before VerifyOnce stops passing
		l.verifyAt = last.Add(-time.Duration(r.rng.Int64N(int64(3 * time.Minute))))
	default: // too late
		l.verifyAt = last.Add(time.Second + time.Duration(r.rng.Int64N(int64(time.Hour))))
	}
	l.verifyAt = maxTime(l.verifyAt, l.uploadAt)
	delay := time.Duration(r.rng.Int64N(int64(10 * time.Second)))
	if r.rng.IntN(2) == 0 {
		delay = time.Duration(r.rng.Int64N(int64(r.opts.MaxStagingDelay) + 1))
	}
	l.stageAt = l.verifyAt.Add(delay)
	r.m.links = append(r.m.links, l)
	r.logf("address %s for %s:%s (upload %v, verify %v, stage %v)", address, branch, path,
		l.uploadAt.Format(time.DateTime), l.verifyAt.Format(time.DateTime), l.stageAt.Format(time.DateTime))
	if !l.uploads {
		l.done = true // the client never comes back
		return nil
	}
	r.events.push(event{at: l.uploadAt, kind: evUpload, link: l})
	return nil
}

func (r *run) upload(l *link) error {
	if err := r.write(l.address, fmt.Sprintf("uploaded to a link address for %s at %s handed out at %s",
		l.branch, l.path, l.handedOut.Format(time.DateTime))); err != nil {
		return err
	}
	r.events.push(event{at: l.verifyAt, kind: evVerify, link: l})
	return nil
}

func (r *run) verify(l *link) error {
	if r.m.branches[l.branch] == nil {
		l.done = true
		r.m.note(l.address, "%s: link abandoned: branch %s deleted", r.now.Format(time.DateTime), l.branch)
		return nil
	}
	got, err := r.signer.VerifyOnce(r.ctx, r.once, repoID, l.branch, l.path, l.signed)
	late := r.now.After(l.made.Add(ttl - linkaddr.StagingMargin))
	switch {
	case late && errors.Is(err, linkaddr.ErrExpired):
		l.done = true
		r.res.Refused++
		r.m.note(l.address, "%s: VerifyOnce refused: %v", r.now.Format(time.DateTime), err)
		return nil
	case err != nil || late:
		return fmt.Errorf("VerifyOnce of an address handed out at %v: %+v, %v", l.handedOut, got, err)
	}
	l.verified = got
	r.m.note(l.address, "%s: VerifyOnce passed, deadline %s", r.now.Format(time.DateTime), got.Deadline.Format(time.DateTime))
	r.events.push(event{at: l.stageAt, kind: evStage, link: l})
	return nil
}

func (r *run) stage(l *link) error {
	l.done = true
	if r.m.branches[l.branch] == nil {
		r.m.note(l.address, "%s: link abandoned: branch %s deleted", r.now.Format(time.DateTime), l.branch)
		return nil
	}
	wrote := false
	took := time.Duration(r.rng.Int64N(int64(30 * time.Second))) // the write lands at its end
	write := func(ctx context.Context) error {
		wrote = true
		r.now = r.now.Add(took)
		if err := r.store.Stage(ctx, l.branch, l.path, l.address); err != nil {
			return err
		}
		r.replace(l.branch, l.path, l.address)
		r.m.note(l.address, "%s: staged on %s at %s", r.now.Format(time.DateTime), l.branch, l.path)
		return nil
	}
	undo := func(ctx context.Context) error {
		if err := r.store.Unstage(ctx, l.branch, l.path); err != nil {
			return err
		}
		delete(r.m.branches[l.branch].staged, l.path)
		r.m.note(l.address, "%s: staging write undone by Stage", r.now.Format(time.DateTime))
		return nil
	}
	if r.opts.UncheckedStaging {
		if err := write(r.ctx); err != nil {
			return fmt.Errorf("stage: %w", err)
		}
	} else if err := r.signer.Stage(r.ctx, l.verified, write, undo); err != nil {
		if !errors.Is(err, linkaddr.ErrExpired) || !r.now.After(l.verified.Deadline) {
			return fmt.Errorf("stage: %w", err)
		}
		r.res.Refused++
		if wrote {
			r.res.LateUndone++
		}
		return nil
	}
	r.res.Links++
	r.logf("link %s:%s = %s", l.branch, l.path, l.address)
	ok, err := r.bucket.Exists(r.ctx, l.address)
	if err != nil {
		return err
	}
	if !ok {
		return r.loss(l.address, "just staged by its link")
	}
	return nil
}

// check looks for every live object in the bucket.
func (r *run) check(when string) error {
	live := r.m.live(r.now, r.opts.UncheckedStaging)
	for _, a := range sortedKeys(live) {
		if r.m.objects[a] == nil {
			continue // never written: a client that did not upload
		}
		ok, err := r.bucket.Exists(r.ctx, a)
		if err != nil {
			return err
		}
		if !ok {
			return r.loss(a, live[a]+", "+when)
		}
	}
	return nil
}

func (r *run) loss(address, why string) error {
	return fmt.Errorf("%w: seed %d, cycle %d, %s: %s (%s) is gone; its history:\n  %v",
		ErrLoss, r.opts.Seed, r.cycle, r.now.Format(time.DateTime), address, why, r.m.objects[address])
}

func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }
