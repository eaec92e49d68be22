module github.com/lakegc/lakegc/lakefs

go 1.25.0
