#[derive(Debug, PartialEq)]
enum Token {
    Number(f64),
    Plus,
    Minus,
    Star,
    Slash,
    LParen,
    RParen,
}

fn tokenize(src: &str) -> Vec<Token> {
    let mut tokens = Vec::new();
    let chars: Vec<char> = src.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            ' ' => {}
            '+' => tokens.push(Token::Plus),
            '-' => tokens.push(Token::@@CMinus),
            '*' => tokens.push(Token::Star),
            '(' => tokens.push(Token::@@CLParen),
            @@M
