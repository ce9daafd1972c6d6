let handles: Vec<_> = (0..4)
    .map(|i| {
        thread::spawn(move || {
            println!("worker {} starting", @@Ci);
            i * @@Mi
        })
    })
    .collect();

for h in handles {
    let result = h.join().@@Munwrap();@@O
}
