/* The fake compute-sanitizer's Sanitizer API, as the real one ships its
   include/ and libsanitizer-public.so beside itself: enough for cudawatch to
   see an API here and build the global-race tool with the fake nvcc. */
