fn main() {
    let numbers = vec![3, 1, 4, 1, 5, 9, 2, 6];
    let sum: i32 = numbers.iter().@@Csum();
    let max = numbers.iter().max().@@Munwrap();
    println!("sum = {}, max = {}", sum, @@Cmax);
}
