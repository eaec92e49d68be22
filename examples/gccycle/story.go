package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/lakegc/lakegc/linkaddr"
	"github.com/lakegc/lakegc/retention"
	"github.com/lakegc/lakegc/uncommitted"
)

// rules are the repository's GC rules: commits are kept 7 days, on main 21.
var rules = &retention.Rules{DefaultRetentionDays: 7, BranchRetentionDays: map[string]int32{"main": 21}}

// fate is what the story expects the GC to decide for one object, and why:
// the program checks the mark against it.
type fate struct {
	what    string // the object, as a person knows it
	garbage bool
	why     string
}

// story is a month in the life of the repository, written so that every
// rule of the GC decides at least one object.
type story struct {
	lake  *lake
	fates map[string]fate // by address
	// landing is how many objects the ingest branch stages.
	landing int
	// inFlightSigned is the link address of the upload in flight when the
	// GC starts.
	inFlightSigned, inFlightAddress string
	// events28 and events29 are committed while the GC runs.
	events28, events29 object
	// raced is set once the writes during the export are done.
	raced bool
}

func (s *story) expect(o object, what string, garbage bool, why string) {
	s.fates[o.Address] = fate{what: what, garbage: garbage, why: why}
}

func csv(name string, rows int) []byte {
	var b strings.Builder
	b.WriteString("id,name,value\n")
	for i := range rows {
		fmt.Fprintf(&b, "%d,%s-%d,%d\n", i, name, i, i*7%100)
	}
	return []byte(b.String())
}

// history plays days 0 to 29, up to the night before the GC.
func (s *story) history(ctx context.Context) error {
	l, clock, log := s.lake, s.lake.clock, s.lake.log
	if err := l.createRepository(ctx, rules); err != nil {
		return err
	}
	s.fates["dummy"] = fate{what: "dummy", why: "the namespace's marker object: never collected"}

	clock.set(0, 9, 0)
	ev1, err := l.upload(ctx, "main", "raw/events-1.csv", csv("day0", 40))
	if err != nil {
		return err
	}
	ev2, err := l.upload(ctx, "main", "raw/events-2.csv", csv("day0b", 25))
	if err != nil {
		return err
	}
	c1, err := l.commit(ctx, "main", "ingest day 0")
	if err != nil {
		return err
	}
	log.event("main", "upload raw/events-1.csv, raw/events-2.csv; commit %s", c1)
	s.expect(ev1, "main:raw/events-1.csv as of day 0", true, "only in "+c1+", which main's 21 days no longer keep")
	s.expect(ev2, "main:raw/events-2.csv as of day 0", false, "committed: still in c2, the last commit before main's 21-day threshold")

	clock.set(1, 9, 0)
	ev1b, err := l.upload(ctx, "main", "raw/events-1.csv", csv("day1", 42))
	if err != nil {
		return err
	}
	c2, err := l.commit(ctx, "main", "fix events-1")
	if err != nil {
		return err
	}
	log.event("main", "overwrite raw/events-1.csv; commit %s", c2)
	s.expect(ev1b, "main:raw/events-1.csv as of day 1", false, "committed: in c2 and later commits, active on main")

	clock.set(2, 10, 0)
	if err := l.store.createBranch("exp", "main"); err != nil {
		return err
	}
	model, err := l.upload(ctx, "exp", "tables/model.parquet", csv("model", 120))
	if err != nil {
		return err
	}
	c3, err := l.commit(ctx, "exp", "train model")
	if err != nil {
		return err
	}
	log.event("exp", "branch exp from main; upload tables/model.parquet; commit %s", c3)
	s.expect(model, "exp:tables/model.parquet", true, "only in "+c3+", dangling since exp was deleted, older than the default 7 days")

	clock.set(3, 11, 0)
	scratch, err := l.upload(ctx, "main", "tmp/scratch.bin", csv("scratch", 10))
	if err != nil {
		return err
	}
	if err := l.store.remove("main", "tmp/scratch.bin"); err != nil {
		return err
	}
	log.event("main", "upload tmp/scratch.bin, then delete it before any commit")
	s.expect(scratch, "main:tmp/scratch.bin", true, "staged, then deleted: nothing references it")

	clock.set(5, 12, 0)
	signed, err := l.getAddress("main", "raw/events-5.csv")
	if err != nil {
		return err
	}
	lost, err := l.uploadTo(ctx, signed, csv("day5", 30))
	if err != nil {
		return err
	}
	log.event("main", "a client uploads raw/events-5.csv to its signed address, then crashes before linking it")
	s.fates[lost] = fate{what: "main:raw/events-5.csv (never linked)", garbage: true, why: "uploaded to a link address that expired unlinked"}

	clock.set(7, 12, 0)
	_, err = l.link(ctx, "main", "raw/events-5.csv", signed)
	if !errors.Is(err, linkaddr.ErrExpired) {
		return fmt.Errorf("linking an address older than the link TTL: got %v, want linkaddr.ErrExpired", err)
	}
	log.event("main", "the client retries the link two days later: refused, the address expired")

	clock.set(10, 9, 0)
	ev2b, err := l.upload(ctx, "main", "raw/events-2.csv", csv("day10", 28))
	if err != nil {
		return err
	}
	c4, err := l.commit(ctx, "main", "refresh events-2")
	if err != nil {
		return err
	}
	log.event("main", "overwrite raw/events-2.csv; commit %s", c4)
	s.expect(ev2b, "main:raw/events-2.csv as of day 10", false, "committed: in c4 and later commits, active on main")

	clock.set(12, 16, 0)
	if err := l.deleteBranch(ctx, "exp"); err != nil {
		return err
	}
	log.event("exp", "delete branch exp (its commit %s is now dangling)", c3)

	clock.set(20, 9, 0)
	ev20, err := l.upload(ctx, "main", "raw/events-20.csv", csv("day20", 33))
	if err != nil {
		return err
	}
	c5, err := l.commit(ctx, "main", "ingest day 20")
	if err != nil {
		return err
	}
	log.event("main", "upload raw/events-20.csv; commit %s", c5)
	s.expect(ev20, "main:raw/events-20.csv", false, "committed: in c5 and later commits, active on main")

	clock.set(28, 10, 0)
	if err := l.store.createBranch("ingest", "main"); err != nil {
		return err
	}
	for i := range s.landing {
		path := fmt.Sprintf("landing/part-%04d.json", i)
		o, err := l.upload(ctx, "ingest", path, fmt.Appendf(nil, `{"part":%d,"rows":%d}`+"\n", i, 1000+i))
		if err != nil {
			return err
		}
		s.expect(o, "ingest:"+path, false, "uncommitted: staged on ingest")
	}
	log.event("ingest", "branch ingest from main; stage landing/part-0000.json … part-%04d.json (not committed)", s.landing-1)

	clock.set(28, 10, 30)
	ev28, err := l.upload(ctx, "main", "raw/events-28.csv", csv("day28", 20))
	if err != nil {
		return err
	}
	s.expect(ev28, "main:raw/events-28.csv", false, "uncommitted: staged on main")
	s.events28 = ev28
	log.event("main", "upload raw/events-28.csv (not committed)")

	if s.inFlightSigned, err = s.inFlight(ctx); err != nil {
		return err
	}

	clock.set(29, 12, 0)
	ev29, err := l.upload(ctx, "main", "raw/events-29.csv", csv("day29", 12))
	if err != nil {
		return err
	}
	log.event("main", "upload raw/events-29.csv (not committed)")
	s.expect(ev29, "main:raw/events-29.csv", false, "uncommitted, and newer than the cutoff")
	s.events29 = ev29
	return nil
}

// inFlight hands out an address on the eve of the GC, just under the link
// TTL before it, for an upload that is linked only after the uncommitted
// export began.
func (s *story) inFlight(ctx context.Context) (signed string, err error) {
	l := s.lake
	l.clock.set(29, 0, 55)
	if signed, err = l.getAddress("ingest", inFlightPath); err != nil {
		return "", err
	}
	if s.inFlightAddress, err = l.uploadTo(ctx, signed, csv("day30", 18)); err != nil {
		return "", err
	}
	l.log.event("ingest", "a client gets an address for %s and starts a slow upload", inFlightPath)
	return signed, nil
}

// duringExport is what the store does while the export runs: after its
// first call, the in-flight upload is linked, a staged object renamed and
// main committed; later pauses see no writes.
func (s *story) duringExport(ctx context.Context, next *uncommitted.Checkpoint) error {
	if s.raced {
		return nil
	}
	s.raced = true
	if err := s.linkDuringExport(ctx, next); err != nil {
		return err
	}
	if err := s.renameDuringExport(ctx, next); err != nil {
		return err
	}
	return s.commitDuringExport(ctx, next)
}

// inFlightPath is where the in-flight upload is linked: on ingest, before
// landing/ in key order, so the export has passed it when the link comes.
const inFlightPath = "events/day-30.csv"

// linkDuringExport links the in-flight upload between two calls of the
// export. If the export has passed its path, the object is in neither of
// the GC's inputs: only its age protects it, and only because the cutoff is
// anchored at the export's start, not at the mark's.
func (s *story) linkDuringExport(ctx context.Context, next *uncommitted.Checkpoint) error {
	o, err := s.lake.link(ctx, "ingest", inFlightPath, s.inFlightSigned)
	if err != nil {
		return err
	}
	if passed(next, "ingest", inFlightPath) {
		s.lake.log.event("ingest", "the client links %s; the export has already passed that path", inFlightPath)
		s.expect(o, "ingest:"+inFlightPath+" (linked during the export)", false,
			"in neither input: kept by its age, its slice being newer than the cutoff")
	} else {
		s.lake.log.event("ingest", "the client links %s", inFlightPath)
		s.expect(o, "ingest:"+inFlightPath, false, "uncommitted: staged on ingest")
	}
	return nil
}

// passed reports whether an export whose next mark is next has already
// scanned a path of a branch.
func passed(next *uncommitted.Checkpoint, branch, path string) bool {
	return next != nil && (branch < next.BranchID || branch == next.BranchID && path < next.Path)
}

// renameDuringExport renames a staged object between two calls of the
// export. If the export has already passed the new path and not yet
// reached the old one, neither path is in the export: only the copy record
// (the export's trailer) keeps the object.
func (s *story) renameDuringExport(ctx context.Context, next *uncommitted.Checkpoint) error {
	src := fmt.Sprintf("landing/part-%04d.json", s.landing-1)
	dst := fmt.Sprintf("archive/part-%04d.json", s.landing-1)
	o, err := s.lake.rename(ctx, "ingest", src, dst)
	if err != nil {
		return err
	}
	if passed(next, "ingest", dst) && !passed(next, "ingest", src) {
		s.lake.log.event("ingest", "rename %s → %s; the export has passed the new path, not yet the old", src, dst)
		s.expect(o, "ingest:"+dst+" (renamed during the export)", false,
			"in neither scanned path: kept by its copy record, the export's trailer")
	} else {
		s.lake.log.event("ingest", "rename %s → %s", src, dst)
		s.expect(o, "ingest:"+dst, false, "uncommitted: staged on ingest")
	}
	return nil
}

// commitDuringExport commits main between two calls of the export. If the
// export has not reached main yet, it will not see the committed objects
// staged: they are safe only because the active commits are read after the
// export.
func (s *story) commitDuringExport(ctx context.Context, next *uncommitted.Checkpoint) error {
	id, err := s.lake.commit(ctx, "main", "ingest days 28-29")
	if err != nil {
		return err
	}
	if passed(next, "main", "raw/events-28.csv") {
		s.lake.log.event("main", "commit %s", id)
		return nil
	}
	s.lake.log.event("main", "commit %s; the export has not reached main, and will not see its staged objects", id)
	s.expect(s.events28, "main:raw/events-28.csv (committed during the export)", false,
		"committed: in "+id+", HEAD of main, read after the export")
	s.expect(s.events29, "main:raw/events-29.csv", false, "committed during the export, and newer than the cutoff")
	return nil
}
