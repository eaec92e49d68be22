//go:build unix

package crash

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"syscall"

	"gocloud.dev/blob"

	"github.com/lakegc/lakegc/internal/faultblob"
)

// The operations the killing bucket counts. A kill at an operation happens
// at the point its name says.
const (
	opList   = "list"   // before a listing page is asked for
	opRead   = "read"   // before an object is opened for reading
	opAttrs  = "attrs"  // before Attributes or Exists
	opWrite  = "write"  // after a Write passed its bytes to the open object: a partial object
	opClose  = "close"  // before Close: the object is whole but not committed
	opCommit = "commit" // after Close committed the object, before the caller hears of it
	opDelete = "delete" // before a delete
	opCopy   = "copy"   // before a copy
)

// killRecord is what a child writes just before it kills itself: which
// operation, on which key, and whether the key existed when the write
// began (for a write or close, the parent checks no partial object
// appeared under it).
type killRecord struct {
	N       int    `json:"n"`
	Op      string `json:"op"`
	Key     string `json:"key"`
	Existed bool   `json:"existed"`
	Label   string `json:"label"`
}

// sweepBatch is the size of sweep's batches with its default deleter.
const sweepBatch = 100

// batchStart labels the first delete of a batch after the first.
const batchStart = "delete data, first of a batch"

// killBucket counts the operations on a bucket and, at operation killAt
// (1-based; 0 never), records it in recordFile and kills its own process
// with SIGKILL: no deferred function, no cleanup runs, as when a machine
// or a container dies. With trace set it keeps the label of every
// operation instead (see label). The operations are faultblob hooks.
type killBucket struct {
	inner      *blob.Bucket
	killAt     int
	recordFile string

	mu      sync.Mutex
	n       int
	deletes int      // deletes of data objects
	trace   []string // labels of the operations, when tracing
	tr      bool
	existed map[string]bool // whether each key being written existed when its write began
}

func newKillBucket(inner *blob.Bucket, killAt int, recordFile string, trace bool) (*killBucket, *blob.Bucket) {
	k := &killBucket{inner: inner, killAt: killAt, recordFile: recordFile, tr: trace, existed: map[string]bool{}}
	count := func(op string) faultblob.Hook {
		return func(_ context.Context, c *faultblob.Call) error {
			k.mu.Lock()
			existed := k.existed[c.Key] && (op == opWrite || op == opClose || op == opCommit)
			k.mu.Unlock()
			k.count(op, c.Key, existed)
			return nil
		}
	}
	fb, err := faultblob.New(inner,
		faultblob.WithHook(faultblob.List, count(opList)),
		faultblob.WithHook(faultblob.Read, count(opRead)),
		faultblob.WithHook(faultblob.Attributes, count(opAttrs)),
		faultblob.WithHook(faultblob.Write, func(ctx context.Context, c *faultblob.Call) error {
			existed, err := inner.Exists(ctx, c.Key) // not counted: the harness's own look
			if err != nil {
				return err
			}
			k.mu.Lock()
			k.existed[c.Key] = existed
			k.mu.Unlock()
			return nil
		}),
		faultblob.WithHook(faultblob.WriteData, count(opWrite)),
		faultblob.WithHook(faultblob.Close, count(opClose)),
		faultblob.WithHook(faultblob.Commit, count(opCommit)),
		faultblob.WithHook(faultblob.Copy, count(opCopy)),
		faultblob.WithHook(faultblob.Delete, count(opDelete)))
	if err != nil {
		panic(err) // the options are valid
	}
	return k, fb.Bucket()
}

// count counts one operation and kills the process if it is the chosen one.
func (k *killBucket) count(op, key string, existed bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.n++
	l := label(op, key)
	if op == opDelete && kind(key) == "data" {
		if k.deletes++; k.deletes > 1 && (k.deletes-1)%sweepBatch == 0 {
			l = batchStart // all the batches before are done, at one batch at a time
		}
	}
	if k.tr {
		k.trace = append(k.trace, l)
	}
	if k.n != k.killAt {
		return
	}
	b, _ := json.Marshal(killRecord{N: k.n, Op: op, Key: key, Existed: existed, Label: l})
	if err := os.WriteFile(k.recordFile, b, 0o644); err != nil {
		panic(err)
	}
	syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // the signal is on its way; nothing else may run
}

func (k *killBucket) ops() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.n
}

// label names an operation by what it touches: op and the kind of file.
func label(op, key string) string {
	return op + " " + kind(key)
}

// kind classifies a key (or a listing's prefix) by the file of the GC it is.
func kind(key string) string {
	switch {
	case strings.Contains(key, "/retention/gc/uncommitted/"):
		switch {
		case strings.HasSuffix(key, "/_lakegc_export.json"):
			return "export-state"
		case strings.HasSuffix(key, "/_lakegc_manifest.json"):
			return "export-manifest"
		case strings.HasSuffix(key, "/uncommitted/"):
			return "export-folder"
		}
		return "export-file"
	case strings.Contains(key, "/retention/gc/unified/"):
		switch {
		case strings.HasSuffix(key, "/summary.json"):
			return "mark-summary"
		case strings.HasSuffix(key, "/sweep.json"):
			return "sweep-json"
		case strings.Contains(key, "/deleted/"):
			return "mark-deleted"
		case strings.Contains(key, "/failed/"):
			return "sweep-failed"
		case strings.Contains(key, "/unrecognized/"):
			return "mark-unrecognized"
		case strings.HasSuffix(key, "/_lakegc/live"):
			return "mark-live"
		case strings.HasSuffix(key, "/_lakegc/index"):
			return "mark-index"
		case strings.HasSuffix(key, "/_lakegc/staged"):
			return "mark-staged"
		case strings.HasSuffix(key, "/_lakegc/parts"):
			return "mark-parts"
		}
		return "report-other"
	case strings.Contains(key, "/retention/gc/quarantine/"):
		switch {
		case strings.Contains(key, "/objects/"):
			return "quarantine-object"
		case strings.Contains(key, "/manifest/"):
			return "quarantine-manifest"
		}
		return "quarantine-record"
	case strings.Contains(key, "/retention/gc/commits/"):
		return "commits-report"
	case strings.Contains(key, "/retention/gc/rules/"):
		return "rules"
	case strings.HasPrefix(key, "data/"):
		return "data"
	case key == "":
		return "namespace"
	case !strings.Contains(key, "/"):
		return "flat" // an object of the old flat layout
	}
	return "other"
}
