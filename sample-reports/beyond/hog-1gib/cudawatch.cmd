/work/main/target/release/cudawatch --color never run --out-dir /tmp/beyond2/hog/run --timeout 60 --stages plain\,memcheck\,synccheck --format json -- python3 torch_train_clean.py 
