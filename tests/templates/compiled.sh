#!/bin/sh
# tests/templates/compiled.sh - the compiled templates on the local
# provider: a hello world and a compile error each (c, cpp, go, rust,
# java, typescript), a skip where the host lacks the compiler.
. "$top_srcdir/tests/templates/lib.sh"

plan 12

cat >"$tmp/hello.c" <<'SRC'
#include <stdio.h>
int main(void) { puts("hello c"); return 0; }
SRC
printf 'int main(void) { return x; }\n' >"$tmp/bad.c"

cat >"$tmp/hello.cpp" <<'SRC'
#include <iostream>
int main() { std::cout << "hello cpp" << std::endl; }
SRC
printf 'int main() { std::string s; }\n' >"$tmp/bad.cpp"

cat >"$tmp/hello.go" <<'SRC'
package main

import "fmt"

func main() { fmt.Println("hello go") }
SRC
printf 'package main\n\nfunc main() { x := 1 }\n' >"$tmp/bad.go"

printf 'fn main() { println!("hello rust"); }\n' >"$tmp/hello.rs"
printf 'fn main() { let x: u32 = "no"; }\n' >"$tmp/bad.rs"

cat >"$tmp/hello.java" <<'SRC'
public class Main {
    public static void main(String[] args) { System.out.println("hello java"); }
}
SRC
printf 'public class Main { public static void main(String[] a) { int x = "no"; } }\n' \
    >"$tmp/bad.java"

printf 'const who: string = "typescript";\nconsole.log(`hello ${who}`);\n' >"$tmp/hello.ts"
printf 'const n: number = "no";\n' >"$tmp/bad.ts"

for t in c:c cpp:cpp go:go rust:rs java:java typescript:ts; do
    try hello "${t%%:*}" "$tmp/hello.${t#*:}"
    try broken "${t%%:*}" "$tmp/bad.${t#*:}"
done
report
