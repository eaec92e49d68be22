package extsort

import (
	"fmt"
	"os"
	"path/filepath"
)

// CreateFile creates a new empty file in d for a caller's own format (one
// that is not a run file); Remove removes it with the folder.
func (d *SpillDir) CreateFile(kind string) (*os.File, error) {
	name := filepath.Join(d.dir, fmt.Sprintf("%s-%06d", kind, d.seq.Add(1)))
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("extsort: spill: %w", err)
	}
	return f, nil
}
