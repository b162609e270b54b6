/work/main/target/release/cudawatch --color never doctor 
