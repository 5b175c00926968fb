// A file that clang-format would change (test/Format/clang-format.test).
int   f( int x ){return x+1;}
