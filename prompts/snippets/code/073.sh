for file in *.jpg; do
    [ -e "$file" ] || continue
    convert "$file" -resize 50% "small_@@C$file"
    echo "resized $file"
done
