export function App() {
  return <div>placemap</div>;
}
