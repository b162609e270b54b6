/work/main/target/release/cudawatch --color never run --out-dir /tmp/fin/free800/hog/run --timeout 60 --stages plain\,memcheck\,synccheck --format json -- python3 beyond/big_matmul.py 
