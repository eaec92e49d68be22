package pathprovider_test

import (
	"sync"
	"testing"
	"time"

	"github.com/rs/xid"

	"github.com/lakegc/lakegc/pathprovider"
)

// globalMutexProvider is the baseline NewPath is measured against: the same
// slices and names, with one mutex held around the whole call (lakeFS's
// PathPartitionProvider takes a mutex for its partition state on every call).
type globalMutexProvider struct {
	mu     sync.Mutex
	size   int
	used   int
	start  time.Time
	prefix string
	slice  string
}

func (m *globalMutexProvider) NewPath() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	m.used++
	if m.slice == "" || m.used > m.size || now.Sub(m.start) >= pathprovider.DefaultInterval {
		m.used, m.start = 1, now
		m.slice = pathprovider.DescendingID(now).String()
	}
	return m.prefix + "/" + m.slice + "/" + xid.NewWithTime(now).String()
}

type newPather interface{ NewPath() string }

func benchNewPath(b *testing.B, p newPather) {
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		var last string
		for b.Loop() {
			last = p.NewPath()
		}
		if _, err := pathprovider.Parse(last); err != nil {
			b.Fatalf("last path %q: %v", last, err)
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.SetParallelism(8) // 8 goroutines per CPU: heavy contention
		b.RunParallel(func(pb *testing.PB) {
			var last string
			for pb.Next() {
				last = p.NewPath()
			}
			if _, err := pathprovider.Parse(last); last != "" && err != nil {
				b.Errorf("last path %q: %v", last, err)
			}
		})
	})
}

func BenchmarkNewPath(b *testing.B) {
	benchNewPath(b, mustNew(b))
}

func BenchmarkNewPathGlobalMutex(b *testing.B) {
	benchNewPath(b, &globalMutexProvider{size: pathprovider.DefaultPartitionSize, prefix: pathprovider.DefaultPrefix})
}

func BenchmarkParse(b *testing.B) {
	path := mustNew(b).NewPath()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := pathprovider.Parse(path); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkResolvePathTime(b *testing.B) {
	p := mustNew(b)
	path := p.NewPath()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.ResolvePathTime(path); err != nil {
			b.Fatal(err)
		}
	}
}
