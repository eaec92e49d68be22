// Package lakefswriter_test measures package uncommitted against the way
// lakeFS writes the same export: github.com/xitongsys/parquet-go, one
// ParquetWriter marshalling row by row into a local file, GZIP, a flush
// every 100 000 rows, a new file past 20 MiB. Both writers export the same
// generated staging area in one benchmark run, so their figures compare.
//
//	go test -run='^$' -bench=Writers -benchtime=1x -count=6 ./examples/lakefswriter | benchstat -col /writer -
package lakefswriter_test
