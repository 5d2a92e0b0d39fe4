// Placeholder while the CLI is written (replaced in this session).
int main() { return 0; }
