%% n-body (Computer Language Benchmarks Game), written from the published
%% algorithm: the Jovian planets and the Sun, N steps of 0.01 days of a
%% simple symplectic integrator; prints the energy before and after.
%% Bodies are tuples {X, Y, Z, Vx, Vy, Vz, Mass}, updated functionally.
%% Run: erlc n-body.erl && erl -noshell -s n-body main 1000 -s init stop
-module('n-body').
-export([main/1]).

-define(PI, 3.141592653589793).
-define(SOLAR_MASS, (4 * ?PI * ?PI)).
-define(DAYS_PER_YEAR, 365.24).
-define(DT, 0.01).

body(X, Y, Z, Vx, Vy, Vz, M) ->
    {X, Y, Z, Vx * ?DAYS_PER_YEAR, Vy * ?DAYS_PER_YEAR, Vz * ?DAYS_PER_YEAR, M * ?SOLAR_MASS}.

bodies() ->
    [{0.0, 0.0, 0.0, 0.0, 0.0, 0.0, ?SOLAR_MASS},
     %% Jupiter
     body(4.84143144246472090e+00, -1.16032004402742839e+00, -1.03622044471123109e-01,
          1.66007664274403694e-03, 7.69901118419740425e-03, -6.90460016972063023e-05,
          9.54791938424326609e-04),
     %% Saturn
     body(8.34336671824457987e+00, 4.12479856412430479e+00, -4.03523417114321381e-01,
          -2.76742510726862411e-03, 4.99852801234917238e-03, 2.30417297573763929e-05,
          2.85885980666130812e-04),
     %% Uranus
     body(1.28943695621391310e+01, -1.51111514016986312e+01, -2.23307578892655734e-01,
          2.96460137564761618e-03, 2.37847173959480950e-03, -2.96589568540237556e-05,
          4.36624404335156298e-05),
     %% Neptune
     body(1.53796971148509165e+01, -2.59193146099879641e+01, 1.79258772950371181e-01,
          2.68067772490389322e-03, 1.62824170038242295e-03, -9.51592254519715870e-05,
          5.15138902046611451e-05)].

main([Arg]) when is_atom(Arg) -> main([atom_to_list(Arg)]);
main([Arg]) ->
    N = list_to_integer(Arg),
    Bodies = offset_momentum(bodies()),
    io:format("~.9f~n", [energy(Bodies)]),
    io:format("~.9f~n", [energy(steps(N, Bodies))]).

offset_momentum([{X, Y, Z, _, _, _, M} | Rest] = Bodies) ->
    {Px, Py, Pz} = lists:foldl(fun({_, _, _, Vx, Vy, Vz, Mi}, {Ax, Ay, Az}) ->
                                       {Ax + Vx * Mi, Ay + Vy * Mi, Az + Vz * Mi}
                               end, {0.0, 0.0, 0.0}, Bodies),
    [{X, Y, Z, -Px / ?SOLAR_MASS, -Py / ?SOLAR_MASS, -Pz / ?SOLAR_MASS, M} | Rest].

energy([]) -> 0.0;
energy([{X, Y, Z, Vx, Vy, Vz, M} | Rest]) ->
    E = 0.5 * M * (Vx * Vx + Vy * Vy + Vz * Vz),
    lists:foldl(fun({X2, Y2, Z2, _, _, _, M2}, Acc) ->
                        Dx = X - X2, Dy = Y - Y2, Dz = Z - Z2,
                        Acc - M * M2 / math:sqrt(Dx * Dx + Dy * Dy + Dz * Dz)
                end, E, Rest) + energy(Rest).

steps(0, Bodies) -> Bodies;
steps(N, Bodies) -> steps(N - 1, [move(B) || B <- advance(Bodies)]).

%% Each pair once: the first body against every later one, then the rest.
advance([]) -> [];
advance([B | Rest]) ->
    {B1, Rest1} = pull(B, Rest, []),
    [B1 | advance(Rest1)].

pull(B, [], Acc) -> {B, lists:reverse(Acc)};
pull({X, Y, Z, Vx, Vy, Vz, M}, [{X2, Y2, Z2, Vx2, Vy2, Vz2, M2} | Rest], Acc) ->
    Dx = X - X2, Dy = Y - Y2, Dz = Z - Z2,
    D2 = Dx * Dx + Dy * Dy + Dz * Dz,
    Mag = ?DT / (D2 * math:sqrt(D2)),
    pull({X, Y, Z, Vx - Dx * M2 * Mag, Vy - Dy * M2 * Mag, Vz - Dz * M2 * Mag, M}, Rest,
         [{X2, Y2, Z2, Vx2 + Dx * M * Mag, Vy2 + Dy * M * Mag, Vz2 + Dz * M * Mag, M2} | Acc]).

move({X, Y, Z, Vx, Vy, Vz, M}) ->
    {X + ?DT * Vx, Y + ?DT * Vy, Z + ?DT * Vz, Vx, Vy, Vz, M}.
