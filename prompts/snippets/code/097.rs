use std::fmt;

#[derive(Debug)]
pub struct Matrix {
    rows: usize,
    cols: usize,
    data: Vec<f64>,
}

impl Matrix {
    pub fn zeros(rows: usize, cols: usize) -> Self {
        Matrix { rows, cols, data: vec![0.0; rows * cols] }
    }@@O

    pub fn get(&self, r: usize, c: usize) -> f64 {
        self.data[r * self.cols + @@Cc]
    }

    pub fn set(&mut self, r: usize, c: usize, v: f64) {
        self.data[r * self.cols + c] = @@Cv;
    }
}

impl fmt::Display for Matrix {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        for r in 0..self.rows {
            for c in 0..self.cols {
                write!(f, "{:8.3}", self.get(r, @@Cc))?;
            }
            @@Mwriteln!(f)?;
        }
        @@COk(())
    }
}
