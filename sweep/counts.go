package sweep

import "fmt"

// keepKeyErr says why a committed key cannot be a keep key, or nil; it
// keeps nothing of key, which may alias a buffer.
func keepKeyErr(key string) error {
	switch {
	case key == "" || key[0] == '/' || fullURI(key):
		return fmt.Errorf("%w: keep key %q is not relative to the namespace", ErrInvalidInput, key)
	case len(key) > maxRecordKey:
		return fmt.Errorf("%w: keep key of %d bytes", ErrInvalidInput, len(key))
	}
	return nil
}
