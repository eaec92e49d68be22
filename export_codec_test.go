package lakegc_test

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
	"gocloud.dev/blob"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/uncommitted"
)

// TestCollectExportsZstd: Collect writes its export in ZSTD (read back
// only by its own mark, so the cheaper codec is safe), every column chunk
// of every file, and the cycle still sweeps exactly the garbage.
func TestCollectExportsZstd(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	cfg := w.config()
	cfg.Sweep = true
	rep, err := lakegc.Collect(ctx, w.host.host(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	prefix := "_lakefs/retention/gc/uncommitted/" + rep.ExportRunID + "/uncommitted/"
	files, chunks := 0, 0
	for it := w.bucket.List(&blob.ListOptions{Prefix: prefix}); ; {
		obj, err := it.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(obj.Key, "/"+uncommitted.ManifestName) {
			continue
		}
		data, err := w.bucket.ReadAll(ctx, obj.Key)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatalf("%s: %v", obj.Key, err)
		}
		files++
		for _, rg := range f.Metadata().RowGroups {
			for _, col := range rg.Columns {
				chunks++
				if col.MetaData.Codec != format.Zstd {
					t.Errorf("%s: column %v in %v, want ZSTD", obj.Key, col.MetaData.PathInSchema, col.MetaData.Codec)
				}
			}
		}
	}
	if files != rep.Export.Files || files < 3 || chunks == 0 {
		t.Fatalf("read %d export files (%d column chunks) under %s; the report says %d", files, chunks, prefix, rep.Export.Files)
	}
	if gone := w.expectLiveKept(); len(gone) != len(w.garbage) {
		t.Errorf("swept %q, want all of %d garbage objects", gone, len(w.garbage))
	}
	if rep.Sweep == nil || rep.Sweep.Deleted != int64(len(w.garbage)) || rep.Sweep.Failed+rep.Sweep.Refused != 0 {
		t.Errorf("sweep report %+v", rep.Sweep)
	}
}
