http.HandleFunc("/hello", func(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("@@Mname")
	if name == "" {
		name = "@@Mworld"
	}
	fmt.Fprintf(w, "Hello, %s", @@Cname)
})
log.Fatal(http.ListenAndServe(":8080", nil))
