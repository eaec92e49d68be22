package uncommitted

// SetReadAhead sets the read-ahead of ReadRun and Addresses for a
// benchmark, and returns the function that restores it. Not safe while a
// run is read.
func SetReadAhead(n int) (restore func()) {
	old := readAhead
	readAhead = n
	return func() { readAhead = old }
}

// SetReadWindow sets the window of ReadRun and Addresses for a test, and
// returns the function that restores it. Not safe while a run is read.
func SetReadWindow(n int) (restore func()) {
	old := readWindow
	readWindow = n
	return func() { readWindow = old }
}
