case "$1" in
    start)
        echo "Starting..."
        ;;
    stop)
        echo "@@MStopping..."
        ;;
    *)
        echo "Usage: $0 {start|@@Cstop}"
        exit 1
        ;;
esac
