package uncommitted

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/lakegc/lakegc/internal/layout"
)

// Checkpoint is the position where the next Prepare call of a run resumes: the
// branch and path of the first entry not yet exported. It is lakeFS's
// GCUncommittedMark, with the same JSON names, so continuation tokens pass
// between lakeFS and this package in both directions.
type Checkpoint struct {
	// BranchID is the branch to resume in.
	BranchID string `json:"branch"`
	// Path is the first key of BranchID not yet exported ("" = the start).
	Path string `json:"path"`
	// RunID identifies the run; every call of a run writes under it.
	RunID string `json:"run_id"`
	// Key is carried for compatibility with lakeFS tokens; Prepare neither
	// sets nor reads it.
	Key string `json:"key"`
}

// ErrInvalidToken is wrapped by every error about a continuation token or
// a Checkpoint that cannot continue a run.
var ErrInvalidToken = errors.New("uncommitted: invalid continuation token")

// EncodeToken returns m as a continuation token: the standard base64
// encoding of its JSON, exactly as lakeFS encodes its mark. A nil checkpoint,
// the end of a run, encodes as "".
func EncodeToken(m *Checkpoint) string {
	if m == nil {
		return ""
	}
	b, _ := json.Marshal(m) // a struct of four strings always marshals
	return base64.StdEncoding.EncodeToString(b)
}

// DecodeToken parses a continuation token made by EncodeToken or by lakeFS.
// The empty token decodes to a nil checkpoint (start a new run). Anything that
// is not standard base64 of a JSON object with a usable run_id returns an error
// wrapping ErrInvalidToken.
func DecodeToken(tok string) (*Checkpoint, error) {
	if tok == "" {
		return nil, nil
	}
	raw, err := base64.StdEncoding.DecodeString(tok)
	if err != nil {
		return nil, fmt.Errorf("%w: not base64: %v", ErrInvalidToken, err)
	}
	trimmed := strings.TrimSpace(string(raw))
	if !strings.HasPrefix(trimmed, "{") {
		return nil, fmt.Errorf("%w: not a JSON object", ErrInvalidToken)
	}
	var m Checkpoint
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidToken, err)
	}
	if err := validRunID(m.RunID); err != nil {
		return nil, err
	}
	return &m, nil
}

// validRunID rejects run IDs that are empty or that could name an object
// outside the run's folder: a run ID is one path element of the module's
// one rule, layout.ValidRunID.
func validRunID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("%w: empty run_id", ErrInvalidToken)
	case !layout.ValidRunID(id):
		return fmt.Errorf("%w: run_id %q is not a run ID (a single path element of letters, digits, '-', '_', '.' and '=')", ErrInvalidToken, id)
	}
	return nil
}
