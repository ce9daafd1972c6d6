fn parse_port(s: &str) -> Result<u16, String> {
    s.trim()
        .parse::<u16>()
        .map_err(|e| format!("invalid port {:?}: {}", s, e))
}

fn main() {@@O
    match parse_port("8080") {
        Ok(port) => println!("port {}", @@Cport),
        Err(msg) => eprintln!("{}", msg),
    }
}
