sh -c strings\ -n\ 6\ \'/tmp/w/cap/.bin/tiled_gemm_race\'\ \|\ grep\ \'\^_Z\'\ \|\ sort\ -u 
