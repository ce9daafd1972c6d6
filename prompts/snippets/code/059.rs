trait Animal {
    fn name(&self) -> String;
    fn speak(&self) -> String {
        format!("{} makes a sound", self.name())
    }
}

struct Dog;

impl Animal for @@CDog {
    @@O
