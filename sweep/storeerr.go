package sweep

import (
	"github.com/lakegc/lakegc/internal/retry"
	"gocloud.dev/gcerrors"
)

// An ErrorClassifier tells the gocloud code of an error of its store when
// it knows better than gocloud's portable code, and ok false for an error
// it does not know; BatchDeleter says how Sweep reads the codes, and which
// stores' answers package sweep reads itself. A BatchDeleter that
// implements it classifies the errors Sweep meets; WithErrorClassifier
// gives Mark and Sweep (and ReadSummary its argument) a classifier of the
// bucket's own errors: azdelete.Classifier for an Azure bucket, as sweep
// does not import the Azure SDK (gcsdelete.Classifier reads GCS's answers
// as sweep does). Implementations must be safe for concurrent use.
type ErrorClassifier interface {
	ClassifyError(err error) (code gcerrors.ErrorCode, ok bool)
}

// classifiers are the ErrorClassifiers of a call, asked in order.
type classifiers []ErrorClassifier

// classifier asks the classifiers in order (see retry.Classifier).
func (cs classifiers) classifier() retry.Classifier {
	return func(err error) (gcerrors.ErrorCode, bool) {
		for _, c := range cs {
			if code, ok := c.ClassifyError(err); ok {
				return code, true
			}
		}
		return gcerrors.Unknown, false
	}
}

// errorCode is the gocloud code of err (see BatchDeleter): an error that
// tells its own code wins, then the classifiers in order, then the store's
// answer read without an SDK, then gocloud's portable code.
func (cs classifiers) errorCode(err error) gcerrors.ErrorCode { return cs.classifier().Code(err) }

func (cs classifiers) isNotFound(err error) bool {
	return err != nil && cs.errorCode(err) == gcerrors.NotFound
}

// transient reports whether err is worth another attempt (retry.Classifier's
// Transient).
func (cs classifiers) transient(err error) bool { return cs.classifier().Transient(err) }
