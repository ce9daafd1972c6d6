select {
case msg := <-messages:
	fmt.Println("received", msg)
case <-time.After(2 * time.@@CSecond):
	fmt.Println("@@Mtimeout")
}
