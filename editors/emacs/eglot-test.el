;;; eglot-test.el --- Runs the Eglot setup of editors/README.md in a batch Emacs  -*- lexical-binding: t; -*-

;;; Commentary:

;; Takes the two Emacs snippets of editors/README.md exactly as written
;; there: evaluates the first (the init file) and writes the second as the
;; manuscript's .dir-locals.el.  Then opens a scene of the manuscript, lets
;; the snippet's hook start Eglot with control-room, waits for the server's
;; diagnostics to reach Flymake, shuts the server down and writes what it
;; saw as JSON.
;;
;;   CONTROL_ROOM_MANUSCRIPT=/tmp/salt-road CONTROL_ROOM_REPORT=/tmp/report.json \
;;     emacs --batch -Q -l editors/emacs/eglot-test.el
;;
;; `control-room' must be on the PATH.  The scene opened is
;; CONTROL_ROOM_SCENE (default Story/Scenes/SCN-the-saltmaster.md), and the
;; wait ends when a diagnostic with the code CONTROL_ROOM_EXPECT_CODE
;; (default name-typo) arrives, of the Flymake type CONTROL_ROOM_EXPECT_TYPE
;; when that is set (eglot-error, eglot-warning, eglot-note), or after
;; CONTROL_ROOM_WAIT_SECONDS (default 20).  Exits 0 when the diagnostic arrived and the server exited cleanly,
;; 1 otherwise; the report is written either way.
;;
;; Emacs has no Markdown mode of its own; the writer installs markdown-mode
;; from MELPA.  Under -Q there is none, so a bare mode by that name stands
;; in for it: the snippet only needs the mode's name and its hook.

;;; Code:

(require 'cl-lib)
(require 'json)

;; Eglot and Flymake load when the snippets ask for them, as in a writer's
;; Emacs; these only tell the byte compiler what will be there.
(defvar eglot-sync-connect)
(declare-function eglot-current-server "eglot")
(declare-function eglot-shutdown "eglot")
(declare-function eglot--project "eglot")
(declare-function jsonrpc--process "jsonrpc")
(declare-function project-root "project")
(declare-function flymake-start "flymake")
(declare-function flymake-diagnostics "flymake")
(declare-function flymake-diagnostic-data "flymake")
(declare-function flymake-diagnostic-beg "flymake")
(declare-function flymake-diagnostic-end "flymake")
(declare-function flymake-diagnostic-type "flymake")

(defvar control-room-test-readme
  (expand-file-name "../README.md"
                    (file-name-directory (or load-file-name buffer-file-name)))
  "The README whose Emacs snippets are under test.")

(defun control-room-test-env (name &optional default)
  "The environment variable NAME, or DEFAULT when unset or empty."
  (let ((value (getenv name)))
    (if (and value (not (string-empty-p value))) value default)))

(defun control-room-test-fail (format-string &rest args)
  "Print FORMAT-STRING with ARGS to stderr and exit with status 1."
  (message "eglot-test: %s" (apply #'format format-string args))
  (kill-emacs 1))

(defun control-room-test-snippets ()
  "The elisp blocks under the README's \"## Emacs (Eglot)\" heading, in order."
  (with-temp-buffer
    (insert-file-contents control-room-test-readme)
    (goto-char (point-min))
    (unless (re-search-forward "^## Emacs (Eglot)$" nil t)
      (control-room-test-fail "no \"## Emacs (Eglot)\" heading in %s"
                              control-room-test-readme))
    (let ((section-end (save-excursion
                         (if (re-search-forward "^## " nil t)
                             (match-beginning 0)
                           (point-max))))
          blocks)
      (while (re-search-forward "^```elisp\n" section-end t)
        (let ((start (point)))
          (unless (re-search-forward "^```$" section-end t)
            (control-room-test-fail "an ```elisp block is not closed"))
          (push (buffer-substring-no-properties start (match-beginning 0)) blocks)))
      (unless (= (length blocks) 2)
        (control-room-test-fail
         "expected two ```elisp blocks (init file, .dir-locals.el), found %d"
         (length blocks)))
      (nreverse blocks))))

(defun control-room-test-diagnostics ()
  "The current buffer's Flymake diagnostics, as alists for the report."
  (mapcar
   (lambda (diagnostic)
     (let* ((data (flymake-diagnostic-data diagnostic))
            (lsp (alist-get 'eglot-lsp-diag data))
            (beg (flymake-diagnostic-beg diagnostic)))
       `((code . ,(format "%s" (plist-get lsp :code)))
         (message . ,(plist-get lsp :message))
         (line . ,(line-number-at-pos beg t))
         (column . ,(save-excursion (goto-char beg) (1+ (current-column))))
         (type . ,(symbol-name (flymake-diagnostic-type diagnostic)))
         (text . ,(buffer-substring-no-properties
                   beg (flymake-diagnostic-end diagnostic))))))
   (flymake-diagnostics)))

(defun control-room-test-run ()
  "Run the snippets against the manuscript and write the report."
  (let* ((root (file-name-as-directory
                (expand-file-name
                 (or (control-room-test-env "CONTROL_ROOM_MANUSCRIPT")
                     (control-room-test-fail "set CONTROL_ROOM_MANUSCRIPT")))))
         (report-file (or (control-room-test-env "CONTROL_ROOM_REPORT")
                          (control-room-test-fail "set CONTROL_ROOM_REPORT")))
         (scene (expand-file-name
                 (control-room-test-env "CONTROL_ROOM_SCENE"
                                        "Story/Scenes/SCN-the-saltmaster.md")
                 root))
         (expected (control-room-test-env "CONTROL_ROOM_EXPECT_CODE" "name-typo"))
         (expected-type (control-room-test-env "CONTROL_ROOM_EXPECT_TYPE"))
         (wanted (lambda (d)
                   (and (equal (alist-get 'code d) expected)
                        (or (null expected-type)
                            (equal (alist-get 'type d) expected-type)))))
         (snippets (control-room-test-snippets))
         (wait (string-to-number
                (control-room-test-env "CONTROL_ROOM_WAIT_SECONDS" "20")))
         (started (float-time))
         server diagnostics command project-root exit-status)
    (unless (executable-find "control-room")
      (control-room-test-fail "control-room is not on the PATH: %s"
                              (getenv "PATH")))
    ;; The stand-in for MELPA's markdown-mode.
    (unless (fboundp 'markdown-mode)
      (define-derived-mode markdown-mode text-mode "Markdown"
        "A stand-in for markdown-mode from MELPA.")
      (add-to-list 'auto-mode-alist '("\\.md\\'" . markdown-mode)))
    ;; The snippets, exactly as the README has them.
    (with-temp-buffer
      (insert (nth 0 snippets))
      (eval-buffer nil nil "editors/README.md (Emacs init snippet)"))
    (with-temp-file (expand-file-name ".dir-locals.el" root)
      (insert (nth 1 snippets)))
    (require 'eglot)
    (setq eglot-sync-connect 10)
    (with-current-buffer (find-file-noselect scene)
      (unless (eq major-mode 'markdown-mode)
        (control-room-test-fail "%s opened in %s, not markdown-mode"
                                scene major-mode))
      ;; `eglot-ensure' connects from the command loop's `post-command-hook';
      ;; a batch Emacs has no command loop, so run the hook once by hand.
      (run-hooks 'post-command-hook)
      (setq server (eglot-current-server))
      (unless server
        (control-room-test-fail
         "the snippet's markdown-mode hook did not start Eglot in %s" scene))
      (setq command (process-command (jsonrpc--process server))
            project-root (project-root (eglot--project server)))
      (while (and (< (- (float-time) started) wait)
                  (not (cl-some wanted diagnostics)))
        (accept-process-output nil 0.1)
        (flymake-start)
        (setq diagnostics (control-room-test-diagnostics)))
      (let ((process (jsonrpc--process server)))
        (eglot-shutdown server)
        (while (and (process-live-p process)
                    (< (- (float-time) started) (+ wait 10)))
          (accept-process-output nil 0.1))
        (setq exit-status (and (not (process-live-p process))
                               (process-exit-status process)))))
    (with-temp-file report-file
      (insert (json-encode
               `((command . ,(vconcat command))
                 (root . ,project-root)
                 (scene . ,scene)
                 (diagnostics . ,(vconcat diagnostics))
                 (exit_status . ,exit-status)
                 (seconds . ,(- (float-time) started))))))
    (unless (cl-some wanted diagnostics)
      (control-room-test-fail "no %s diagnostic%s within %s seconds; got %S"
                              expected
                              (if expected-type (format " of type %s" expected-type) "")
                              wait diagnostics))
    (unless (eql exit-status 0)
      (control-room-test-fail "the server did not exit cleanly: %S" exit-status))
    (message "eglot-test: %d diagnostics from %s; report in %s"
             (length diagnostics) (string-join command " ") report-file)))

(control-room-test-run)
(kill-emacs 0)

;;; eglot-test.el ends here
