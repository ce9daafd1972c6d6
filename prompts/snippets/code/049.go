var wg sync.WaitGroup
results := make(chan int, len(jobs))

for _, job := range jobs {
	wg.Add(1)
	go func(j Job) {
		defer wg.Done()
		results <- j.@@MRun()
	}(job)
}

wg.@@CWait()
close(results)
