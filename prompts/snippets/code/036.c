pid_t pid = fork();
if (pid < 0) {
    perror("@@Mfork");
    exit(EXIT_@@CFAILURE);
} else if (pid == 0) {
    /* child process */
    @@Oexeclp("ls", "ls", "-l", (char *)NULL);
}
