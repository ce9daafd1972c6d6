package main

import (
	"fmt"
	"os"
)

func main() {@@O
	if len(os.Args) < @@C2 {
		fmt.Println("usage: greet NAME")
		os.Exit(1)
	}
	fmt.Printf("Hello, %s!\n", os.Args[1])
}
