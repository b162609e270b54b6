sh -c strings\ -n\ 6\ \'/tmp/w/cap/.bin/cutlass_style_race\'\ \|\ grep\ \'\^_Z\'\ \|\ sort\ -u 
