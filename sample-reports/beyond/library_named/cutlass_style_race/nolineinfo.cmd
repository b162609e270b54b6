/work/main/target/release/cudawatch --color never run --out-dir /tmp/w/cap/cutlass_style_race/run-nolineinfo --format json -- /tmp/w/cap/.bin/cutlass_style_race-nolineinfo 
