export default function Counter({ start = 0 }) {
  const [count, setCount] = useState(start);

  return (
    <div className="counter">@@O
      <p>You clicked {count} @@Mtimes</p>
      <button onClick={() => setCount(count + @@C1)}>Click me</button>
    </div>
  );
}
