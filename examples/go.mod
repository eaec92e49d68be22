module github.com/lakegc/lakegc/examples

go 1.25.0

require github.com/lakegc/lakegc v0.0.0

require (
	github.com/apache/arrow-go/v18 v18.8.0 // indirect
	github.com/johannesboyne/gofakes3 v1.2.0 // indirect
	github.com/lib/pq v1.12.3 // indirect
	github.com/ryszard/goskiplist v0.0.0-20150312221310-2dfbae5fcf46 // indirect
	github.com/xitongsys/parquet-go v1.6.2 // indirect
	go.shabbyrobe.org/gocovmerge v0.0.0-20230507111327-fa4f82cfbf4d // indirect
	gocloud.dev v0.45.0 // indirect
	golang.org/x/tools v0.48.0 // indirect
)

replace github.com/lakegc/lakegc => ../
