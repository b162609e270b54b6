/work/main/target/release/cudawatch --color never run --out-dir /tmp/w/cap/tiled_gemm_race/run-nolineinfo --format json -- /tmp/w/cap/.bin/tiled_gemm_race-nolineinfo 
