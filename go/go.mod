module github.com/libnfq-batch/libnfq-batch/go

go 1.19
