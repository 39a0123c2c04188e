%% The OTP workloads on BEAM with the real gen_server and supervisor, run
%% side by side with `lona bench call|supstart|suprestart`. Each prints
%% one line with the same figures as the Lona side.
%%   erlc otp.erl && erl -noshell -run otp main call
%% The logger is silenced (level none), as the Lona binary installs no
%% logger: 100,000 supervisor reports would otherwise dominate the time.
-module(otp).
-export([main/1, init/1, handle_call/3, handle_cast/2, handle_info/2,
         start_worker/0, start_crasher/1]).

main(Args) ->
    logger:set_primary_config(level, none),
    Which = case Args of [] -> all; [A|_] -> list_to_atom(A) end,
    Runs = [{call, fun call_bench/0}, {supstart, fun supstart_bench/0},
            {suprestart, fun suprestart_bench/0}],
    [F() || {N, F} <- Runs, Which =:= all orelse Which =:= N],
    halt().

t(F) -> T0 = erlang:monotonic_time(nanosecond), R = F(), {erlang:monotonic_time(nanosecond) - T0, R}.

%% One init/1 for both behaviours, told apart by the argument.
init(counter) -> {ok, 0};
init(simple) ->
    {ok, {#{strategy => simple_one_for_one, intensity => 1, period => 5},
          [#{id => w, start => {?MODULE, start_worker, []}}]}};
init({crasher, Parent, Intensity}) ->
    {ok, {#{strategy => one_for_one, intensity => Intensity, period => 1},
          [#{id => crasher, start => {?MODULE, start_crasher, [Parent]}}]}}.

handle_call(N, _From, Acc) -> {reply, Acc + N, Acc + N}.
handle_cast(_, S) -> {noreply, S}.
handle_info(_, S) -> {noreply, S}.

%% call: 1,000,000 gen_server:call to one server.
call_bench() ->
    C = 1000000,
    {ok, S} = gen_server:start(?MODULE, counter, []),
    {Ns, Last} = t(fun() -> call_loop(S, C, 0) end),
    C = Last,
    gen_server:stop(S),
    io:format("call calls=~p total_ms=~.1f us_per_call=~.3f~n", [C, Ns/1.0e6, Ns/C/1000]).
call_loop(_, 0, Last) -> Last;
call_loop(S, N, _) -> call_loop(S, N - 1, gen_server:call(S, 1)).

%% supstart: a simple_one_for_one supervisor starting 100,000 workers.
start_worker() -> {ok, spawn_link(fun() -> receive _ -> ok end end)}.
supstart_bench() ->
    N = 100000,
    process_flag(trap_exit, true),
    {ok, Sup} = supervisor:start_link(?MODULE, simple),
    {Ns, _} = t(fun() -> [{ok, _} = supervisor:start_child(Sup, []) || _ <- lists:seq(1, N)] end),
    N = proplists:get_value(active, supervisor:count_children(Sup)),
    exit(Sup, shutdown),
    receive {'EXIT', Sup, _} -> ok end,
    io:format("supstart children=~p total_ms=~.1f us_per_child=~.3f~n", [N, Ns/1.0e6, Ns/N/1000]).

%% suprestart: a one_for_one supervisor restarting a child that crashes at
%% once, 100,000 times (each start tells the bench process).
start_crasher(Parent) ->
    Pid = spawn_link(fun() -> exit(crash) end),
    Parent ! started,
    {ok, Pid}.
suprestart_bench() ->
    R = 100000,
    process_flag(trap_exit, true),
    Self = self(),
    {Ns, Sup} = t(fun() ->
        {ok, Sup} = supervisor:start_link(?MODULE, {crasher, Self, 10 * R}),
        wait_started(R + 1),
        Sup
    end),
    exit(Sup, shutdown),
    receive {'EXIT', Sup, _} -> ok end,
    io:format("suprestart restarts=~p total_ms=~.1f us_per_restart=~.3f~n", [R, Ns/1.0e6, Ns/R/1000]).
wait_started(0) -> ok;
wait_started(N) -> receive started -> wait_started(N - 1) end.
