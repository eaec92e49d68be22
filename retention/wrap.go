package retention

import "strings"

// opError is an error of op that wraps an error which may already say
// "retention: ": its text names the package once, as "retention: op: detail".
// errors.Is and errors.As see the wrapped error.
type opError struct {
	op  string
	err error
}

// wrapOp returns err as an error of op, or nil for a nil err.
func wrapOp(op string, err error) error {
	if err == nil {
		return nil
	}
	return &opError{op: op, err: err}
}

func (e *opError) Error() string {
	return "retention: " + e.op + ": " + strings.TrimPrefix(e.err.Error(), "retention: ")
}

func (e *opError) Unwrap() error { return e.err }
