/root/out/cap/.bin/retry_until_done 
