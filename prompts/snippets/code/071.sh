if [ -z "$1" ]; then
    echo "usage: $0 NAME" >&@@C2
    exit 1
fi

name="$1"
echo "Hello, @@C$name"
